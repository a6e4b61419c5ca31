package tokenizer

// paragraph is about 2,000 characters of ordinary English prose, the size
// of a long chat turn, used by the exact-count test and BenchmarkCount.
const paragraph = `When a session grows past a few dozen turns, the context builder has to ` +
	`decide what the model will see next. It cannot send everything: every model ` +
	`has a window, and every token in that window costs money and time. So the ` +
	`builder works to a budget. It starts with the system prompt and the newest ` +
	`turn, then walks backwards through history, adding older turns while they ` +
	`still fit, and summarising or dropping the rest. The budget is only as good ` +
	`as the counts behind it. Counting four characters per token is quick and ` +
	`needs no data, but it drifts badly on code, on numbers, and on languages that ` +
	`are not written in the Latin alphabet; a budget built on it either wastes a ` +
	`third of the window or overflows it without warning. A real byte-pair ` +
	`encoding gives the same numbers the provider will bill for, at the price of a ` +
	`few hundred milliseconds to load the rank table once per process and some ` +
	`microseconds per turn after that. That is why each turn stores its own count ` +
	`when it is written, labelled with the tokenizer that produced it: a build ` +
	`then adds stored integers instead of re-reading the whole history, and a ` +
	`session that switches from one encoding to another knows exactly which ` +
	`counts are stale. The same idea applies to artifacts that are promoted into ` +
	`the prompt, to tool results that are quoted back, and to the short notes ` +
	`that summarise a dropped stretch of conversation. None of this is ` +
	`complicated, but all of it depends on counting being cheap, deterministic ` +
	`and safe to call from many goroutines at once, because writes and builds ` +
	`happen concurrently on a busy server. If the encoding ever failed to load, ` +
	`the system should keep working with the rough rule and say so loudly in the ` +
	`logs, rather than refusing every request until someone restarts it. ` +
	`Finally, the numbers must be stable across releases, so tests pin exact ` +
	`counts for fixed strings and fail the moment an upgrade changes them. Those ` +
	`tests run against the real encodings, never against hand-written stand-ins.`
