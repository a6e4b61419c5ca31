package dashboard_test

import (
	"os"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// At a phone's 390 px the header wraps with Sign out on screen, and the
// page does not scroll sideways: the table scrolls inside its card.
func TestListFitsAPhone(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	seedKitchen(t, s)
	b := newBrowser(t)
	b.run("a phone's viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	b.signIn(s.URL, s.AdminKey)
	b.waitFor("the sessions list", `document.querySelectorAll("#sessions tbody tr").length === 7`)
	b.waitFor("live updates", `document.querySelector("#live").dataset.state === "live"`)

	var fit struct {
		Left, Right, Top, Bottom float64
		ScrollWidth, Width       int
		TableScrolls             bool
	}
	b.run("measure", chromedp.Evaluate(`(() => {
		const r = document.querySelector("#sign-out").getBoundingClientRect();
		const wrap = document.querySelector("#sessions");
		return { left: r.left, right: r.right, top: r.top, bottom: r.bottom,
			scrollWidth: document.documentElement.scrollWidth, width: window.innerWidth,
			tableScrolls: wrap.scrollWidth > wrap.clientWidth };
	})()`, &fit))
	if os.Getenv("SCREENSHOTS") == "1" {
		var shot []byte
		b.run("screenshot", chromedp.FullScreenshot(&shot, 100))
		require.NoError(t, os.WriteFile("/tmp/phone.png", shot, 0o644))
	}
	require.Equal(t, 390, fit.Width)
	require.GreaterOrEqual(t, fit.Left, 0.0, "Sign out starts on screen")
	require.LessOrEqual(t, fit.Right, 390.0, "Sign out ends on screen")
	require.Greater(t, fit.Bottom, fit.Top, "Sign out is shown")
	require.LessOrEqual(t, fit.ScrollWidth, 390, "the page does not scroll sideways")
	require.True(t, fit.TableScrolls, "the table scrolls inside its card instead")
	require.Empty(t, b.pageErrors(), "the page logged no error")
}
