// What the tests share: the real server (SG_URL, SG_API_KEY: an ADMIN key, given by
// clients/typescript_test.go), clients, sessions, and a TCP proxy the tests cut.
import { randomUUID } from 'node:crypto';
import net from 'node:net';

import { SessionGraphClient, type ClientOptions } from '../src/index.js';

function env(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run the tests through clients/typescript_test.go (go test ./clients/)`);
  return v;
}

export const url = env('SG_URL');
export const adminKey = env('SG_API_KEY');

export function client(opts: Partial<ClientOptions> = {}): SessionGraphClient {
  return new SessionGraphClient({ url, apiKey: adminKey, ...opts });
}

/** Opens a fresh session in tenant (default acme) and answers its id. */
export async function openSession(c: SessionGraphClient, tenant = 'acme'): Promise<string> {
  const { session } = await c.openSession({ tenant, externalKey: `ts-${randomUUID()}` });
  return session.id;
}

/** A TCP proxy to the server that a test cuts mid-stream: every open connection is destroyed. */
export class Proxy {
  private readonly server: net.Server;
  private readonly open = new Set<net.Socket>();
  /**
   * Connections that carried a request so far (undici may open a spare TCP connection that
   * sends nothing; it is not counted).
   */
  connections = 0;
  port = 0;

  private constructor(private readonly target: URL) {
    this.server = net.createServer((down) => {
      down.once('data', () => this.connections++);
      const up = net.connect(Number(this.target.port), this.target.hostname);
      this.open.add(down);
      this.open.add(up);
      const drop = () => {
        down.destroy();
        up.destroy();
        this.open.delete(down);
        this.open.delete(up);
      };
      down.on('error', drop).on('close', drop);
      up.on('error', drop).on('close', drop);
      down.pipe(up);
      up.pipe(down);
    });
  }

  static async start(): Promise<Proxy> {
    const p = new Proxy(new URL(url));
    await new Promise<void>((resolve) => p.server.listen(0, '127.0.0.1', resolve));
    p.port = (p.server.address() as net.AddressInfo).port;
    return p;
  }

  /** The server's GraphQL URL, through the proxy. */
  get url(): string {
    const u = new URL(url);
    u.host = `127.0.0.1:${this.port}`;
    return u.toString();
  }

  /** How many connections (each side counted) are open through the proxy now. */
  get openSockets(): number {
    return this.open.size;
  }

  /** Destroys every connection through the proxy now, as a network failure would. */
  cut(): number {
    const n = this.open.size;
    for (const s of this.open) s.destroy();
    this.open.clear();
    return n;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** until resolves once cond() holds, looking every few milliseconds; it fails after withinMs. */
export async function until(cond: () => boolean, what: string, withinMs = 10000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`not within ${withinMs} ms: ${what}`);
    await sleep(5);
  }
}
