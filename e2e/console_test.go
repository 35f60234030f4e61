package e2e

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/tablo/tablo/internal/app"
	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/console"
)

var updateScreenshots = flag.Bool("console.screenshots", false, "rewrite docs/console/*.png from the browser tests")

// startBrowser starts headless Chromium (Debian's /usr/bin/chromium, or $TABLO_CHROMIUM) with a
// fresh profile and no background network. Without Chromium the test skips, unless
// TABLO_REQUIRE_BROWSER=1 (CI) makes that a failure.
func startBrowser(t *testing.T) (context.Context, *atomic.Int32) {
	t.Helper()
	path := os.Getenv("TABLO_CHROMIUM")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if _, err := exec.LookPath(path); err != nil {
		if os.Getenv("TABLO_REQUIRE_BROWSER") == "1" {
			t.Fatalf("TABLO_REQUIRE_BROWSER=1 but no Chromium at %s: %v", path, err)
		}
		t.Skipf("no Chromium at %s (apt-get install chromium; TABLO_REQUIRE_BROWSER=1 makes this fail)", path)
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 860))
	dialogs := new(atomic.Int32)
	ctx, cancelC := chromedp.NewContext(actx, chromedp.WithListener(func(ev any) {
		if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			dialogs.Add(1)
		}
	}))
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("start chromium: %v", err)
	}
	return ctx, dialogs
}

// consoleServer serves the console for a running Tablo on its own loopback test listener
// (the handler the admin listener mounts), here to set RequireLogin.
func consoleServer(t *testing.T, a *app.App, requireLogin bool) string {
	t.Helper()
	c := console.New(console.Options{
		Accounts: []auth.Account{auth.DevAccount()}, TableURL: "http://" + a.Addr().String(),
		QueueURL: "http://" + a.ServiceAddr("queue").String(), BlobURL: "http://" + a.ServiceAddr("blob").String(),
		Partitions: a.Partitions().Handler(),
		Version:    "test", Engine: "pebble", RequireLogin: requireLogin, Token: "start-up-token",
	})
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	return srv.URL
}

func run(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

// waitJS polls a JavaScript predicate until it is truthy.
func waitJS(t *testing.T, ctx context.Context, expr string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool]("(() => { try { return !!("+expr+") } catch (e) { return false } })()", chromedp.WithPollingTimeout(15*time.Second))); err != nil {
		body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText.slice(0, 2000)`))
		t.Fatalf("waiting for %s: %v\npage:\n%s", expr, err, body)
	}
}

func evalJS[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// screenshot writes docs/console/name.png when -console.screenshots is set.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if !*updateScreenshots {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("..", "docs", "console", name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// setValue sets a form control's value as typing would leave it.
func setValue(sel, v string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		ok, err := chromedp.Evaluate[bool]("(e => { if (!e) return false; e.value = "+jsString(v)+"; return e.value === "+jsString(v)+" })(document.querySelector("+jsString(sel)+"))")(ctx, t)
		if err == nil && !ok {
			err = fmt.Errorf("cannot set %s to %q", sel, v)
		}
		return chromedp.Void{}, err
	}
}

func hash(t *testing.T, ctx context.Context, h string) {
	t.Helper()
	evalJS[string](t, ctx, "location.hash = "+jsString(h))
}

// waitFile waits for a download to complete and returns its content.
func waitFile(t *testing.T, path string) string {
	t.Helper()
	for range 100 {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			return string(b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no download at %s", path)
	return ""
}

func jsString(s string) string { b, _ := json.Marshal(s); return string(b) }

func TestConsoleBrowser(t *testing.T) {
	// The console as the server mounts it: at the root of the admin listener.
	ops := startOpsServer(t, t.TempDir(), nil)
	ts := &testServer{app: ops.app, endpoint: ops.base + "/" + devAccount}
	ctx, dialogs := startBrowser(t)
	svc := ts.service(t)
	bg := context.Background()

	// 1,200 entities in 12 partitions, loaded in batches.
	inv := svc.NewClient("Inventory")
	if _, err := inv.CreateTable(bg, nil); err != nil {
		t.Fatal(err)
	}
	for p := range 12 {
		var batch []aztables.TransactionAction
		for r := range 100 {
			e, _ := json.Marshal(map[string]any{"PartitionKey": fmt.Sprintf("p%02d", p), "RowKey": fmt.Sprintf("r%04d", r),
				"Price": float64(r) + 0.5, "Price@odata.type": "Edm.Double", "Qty": r, "Big": fmt.Sprint(int64(r) << 40), "Big@odata.type": "Edm.Int64"})
			batch = append(batch, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: e})
		}
		if _, err := inv.SubmitTransaction(bg, batch, nil); err != nil {
			t.Fatal(err)
		}
	}
	xss := svc.NewClient("Xss")
	if _, err := xss.CreateTable(bg, nil); err != nil {
		t.Fatal(err)
	}
	const payload = `<script>alert(1)</script>`
	const payload2 = `<img src=x onerror=alert(2)>`
	e, _ := json.Marshal(map[string]any{"PartitionKey": "a", "RowKey": payload2, "Note": payload, "Html": `<b>bold</b>`})
	if _, err := xss.AddEntity(bg, e, nil); err != nil {
		t.Fatal(err)
	}

	base := ops.admin
	run(t, ctx, chromedp.Navigate(base+"/#tables"))

	t.Run("Listing", func(t *testing.T) {
		waitJS(t, ctx, `[...document.querySelectorAll('#tables a')].map(a => a.textContent).join(',') === 'Inventory,Xss'`)
		screenshot(t, ctx, "tables")
	})

	t.Run("CreateAndDeleteTable", func(t *testing.T) {
		run(t, ctx, setValue("#new-table", "Scratch"), chromedp.Click("#new-table + button"))
		waitJS(t, ctx, `[...document.querySelectorAll('#tables a')].map(a => a.textContent).join(',') === 'Inventory,Scratch,Xss'`)
		evalJS[bool](t, ctx, `(window.confirm = () => true, true)`) // the delete button asks first
		run(t, ctx, chromedp.Click(chromedp.Search(`//a[text()="Scratch"]/../../td/button`)))
		waitJS(t, ctx, `document.querySelector('#status').textContent === 'Deleted Scratch' && document.querySelectorAll('#tables a').length === 2`)
	})

	t.Run("PagingPast1000", func(t *testing.T) {
		hash(t, ctx, "#table/Inventory")
		waitJS(t, ctx, `document.querySelector('#page-info')?.textContent === 'Page 1: 1000 entities, more follow'`)
		// Typed columns: the union of the page's properties, with their EDM types.
		heads := evalJS[string](t, ctx, `[...document.querySelectorAll('#entities th[data-col]')].map(th => th.textContent).join(',')`)
		if heads != "PartitionKeyEdm.String,RowKeyEdm.String,TimestampEdm.DateTime,BigEdm.Int64,PriceEdm.Double,QtyEdm.Int32" {
			t.Fatalf("columns %q", heads)
		}
		screenshot(t, ctx, "entities")
		run(t, ctx, chromedp.Click("#next-page"))
		waitJS(t, ctx, `document.querySelector('#page-info').textContent === 'Page 2: 200 entities, last page'`)
		if first := evalJS[string](t, ctx, `document.querySelector('#entities tr[data-pk]').dataset.pk + '/' + document.querySelector('#entities tr[data-pk]').dataset.rk`); first != "p10/r0000" {
			t.Fatalf("page 2 starts at %s, want p10/r0000 (the continuation)", first)
		}
		run(t, ctx, chromedp.Click("#prev-page"))
		waitJS(t, ctx, `document.querySelector('#page-info').textContent.startsWith('Page 1: 1000')`)
	})

	t.Run("FilterWithPlan", func(t *testing.T) {
		run(t, ctx, setValue("#q-filter", "PartitionKey eq 'p03' and Qty ge 90"), setValue("#q-select", "Qty,Price"), chromedp.Click("#run"))
		waitJS(t, ctx, `document.querySelector('#page-info').textContent === 'Page 1: 10 entities, last page'`)
		kind := evalJS[string](t, ctx, `document.querySelector('#plan-kind').textContent`)
		keys := evalJS[string](t, ctx, `document.querySelector('#plan-keys').textContent`)
		counts := evalJS[string](t, ctx, `document.querySelector('#plan-counts').textContent`)
		ranges := evalJS[string](t, ctx, `document.querySelector('#plan-ranges').textContent`)
		if kind != "partition" || !strings.Contains(keys, "p03") || counts != "100 / 10" || !strings.HasPrefix(ranges, "1 ") {
			t.Fatalf("plan: kind %q keys %q counts %q ranges %q", kind, keys, counts, ranges)
		}
		if !strings.Contains(evalJS[string](t, ctx, `document.querySelector('#plan-time').textContent`), "ms") {
			t.Fatal("no time shown")
		}
		screenshot(t, ctx, "query")

		// Export the result page.
		dir := t.TempDir()
		if _, err := chromedp.Call(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
			Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir}); err != nil {
			t.Fatal(err)
		}
		run(t, ctx, chromedp.Click("#export-csv"), chromedp.Click("#export-json"))
		csv, js := waitFile(t, filepath.Join(dir, "Inventory.csv")), waitFile(t, filepath.Join(dir, "Inventory.json"))
		if !strings.HasPrefix(csv, "Price,Qty\r\n90.5,90\r\n") || strings.Count(csv, "\r\n") != 11 {
			t.Fatalf("CSV export:\n%s", csv)
		}
		var rows []map[string]any
		if err := json.Unmarshal([]byte(js), &rows); err != nil || len(rows) != 10 || rows[9]["Qty"] != 99.0 {
			t.Fatalf("JSON export %v:\n%s", err, js)
		}
	})

	t.Run("InsertAndETagConflict", func(t *testing.T) {
		run(t, ctx, setValue("#q-filter", ""), setValue("#q-select", ""), chromedp.Click("#new-entity"),
			setValue("#e-pk", "new"), setValue("#e-rk", "one"),
			setValue("#editor tr.prop .p-name", "Count"), setValue("#editor tr.prop .p-type", "Edm.Int64"),
			setValue("#editor tr.prop .p-value", "9007199254740993"), chromedp.Click("#save"))
		waitJS(t, ctx, `document.querySelector('#status').textContent === 'Inserted'`)
		got, err := inv.GetEntity(bg, "new", "one", &aztables.GetEntityOptions{Format: to.Ptr(aztables.MetadataFormatFull)})
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		_ = json.Unmarshal(got.Value, &m)
		if m["Count"] != "9007199254740993" || m["Count@odata.type"] != "Edm.Int64" {
			t.Fatalf("inserted %v", m)
		}

		// Open the editor, let someone else change the entity, then save: 412 shown as a conflict.
		run(t, ctx, setValue("#q-filter", "PartitionKey eq 'new'"), chromedp.Click("#run"))
		waitJS(t, ctx, `document.querySelector('#page-info').textContent === 'Page 1: 1 entities, last page'`)
		run(t, ctx, chromedp.Click("#entities button.edit"))
		waitJS(t, ctx, `!!document.querySelector('#e-etag')`)
		other, _ := json.Marshal(map[string]any{"PartitionKey": "new", "RowKey": "one", "Count": 1})
		if _, err := inv.UpdateEntity(bg, other, &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeReplace}); err != nil {
			t.Fatal(err)
		}
		run(t, ctx, setValue("#e-mode", "merge"), setValue("#editor tr.prop .p-value", "42"), chromedp.Click("#save"))
		waitJS(t, ctx, `document.querySelector('#e-msg').className === 'conflict' && document.querySelector('#e-msg').textContent.startsWith('ETag conflict (412 UpdateConditionNotSatisfied)')`)
		screenshot(t, ctx, "edit-conflict")

		// Reloaded, the same edit goes through.
		run(t, ctx, chromedp.Click("#run"))
		waitJS(t, ctx, `!document.querySelector('#editor') && document.querySelector('#entities td[data-col=Count]').textContent === '1'`)
		run(t, ctx, chromedp.Click("#entities button.edit"))
		waitJS(t, ctx, `!!document.querySelector('#e-etag')`)
		run(t, ctx, setValue("#editor tr.prop .p-value", "42"), chromedp.Click("#save"))
		waitJS(t, ctx, `document.querySelector('#status').textContent === 'Saved (replace)' && document.querySelector('#entities td[data-col=Count]')?.textContent === '42'`)
	})

	t.Run("XSS", func(t *testing.T) {
		hash(t, ctx, "#table/Xss")
		waitJS(t, ctx, `!!document.querySelector('#entities td[data-col=Note]')`)
		note := evalJS[string](t, ctx, `document.querySelector('#entities td[data-col=Note]').textContent`)
		rk := evalJS[string](t, ctx, `document.querySelector('#entities td[data-col=RowKey]').textContent`)
		if note != payload || rk != payload2 {
			t.Fatalf("cells %q %q, want the payloads as text", note, rk)
		}
		if n := evalJS[int](t, ctx, `document.querySelectorAll('#main script, #main img, #main b').length`); n != 0 {
			t.Fatalf("%d elements made from data", n)
		}
		time.Sleep(200 * time.Millisecond) // an onerror handler would have fired by now
		if n := dialogs.Load(); n != 0 {
			t.Fatalf("%d dialogs opened", n)
		}
	})

	t.Run("HeatMapUnderLoad", func(t *testing.T) {
		hash(t, ctx, "#partitions")
		waitJS(t, ctx, `!!document.querySelector('#p-table option[value="table:Inventory"]')`)
		run(t, ctx, setValue("#p-table", "table:Inventory"))
		evalJS[bool](t, ctx, `document.querySelector('#p-table').dispatchEvent(new Event('change'))`)
		before := evalJS[string](t, ctx, `document.querySelector('#p-time').textContent`)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					pager := inv.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("PartitionKey eq 'p07'")})
					for pager.More() {
						if _, err := pager.NextPage(bg); err != nil {
							return
						}
					}
				}
			})
		}
		defer func() { close(stop); wg.Wait() }()
		// The page redraws by itself: the hottest key and a warm range appear without reload.
		waitJS(t, ctx, `document.querySelector('#hottest tr[data-pk="p07"] .rate') && parseFloat(document.querySelector('#hottest tr[data-pk="p07"] .rate').textContent) > 100`)
		waitJS(t, ctx, `[...document.querySelectorAll('#heat .cell')].some(c => parseFloat(c.dataset.rate) > 100)`)
		if after := evalJS[string](t, ctx, `document.querySelector('#p-time').textContent`); after == before {
			t.Fatal("the view did not refresh")
		}
		if first := evalJS[string](t, ctx, `document.querySelector('#hottest tr[data-pk]').dataset.pk`); first != "p07" {
			t.Fatalf("hottest key %q, want p07", first)
		}
		screenshot(t, ctx, "partitions")
	})

	t.Run("QueuePeekPutDequeue", func(t *testing.T) {
		hash(t, ctx, "#queues")
		run(t, ctx, setValue("#new-queue", "jobs"), chromedp.Click("#new-queue + button"))
		waitJS(t, ctx, `[...document.querySelectorAll('#queues a')].map(a => a.textContent).join(',') === 'jobs'`)
		hash(t, ctx, "#queues/jobs")
		waitJS(t, ctx, `document.querySelector('#peek-info')?.textContent.startsWith('0 message')`)
		for _, m := range []string{"first", payload} {
			run(t, ctx, setValue("#msg-text", m), chromedp.Click("#put"))
			waitJS(t, ctx, `document.querySelectorAll('#messages tr.message').length === `+map[string]string{"first": "1", payload: "2"}[m])
		}
		if got := evalJS[string](t, ctx, `[...document.querySelectorAll('#messages td[data-col=MessageText]')].map(td => td.textContent).join('|')`); got != "first|"+payload {
			t.Fatalf("peeked %q", got)
		}
		screenshot(t, ctx, "queue")
		run(t, ctx, chromedp.Click("#dequeue"))
		waitJS(t, ctx, `document.querySelector('#taken-text')?.textContent === 'first' && document.querySelectorAll('#messages tr.message').length === 1`)
		run(t, ctx, chromedp.Click("#delete-taken"))
		waitJS(t, ctx, `document.querySelector('#status').textContent.startsWith('Deleted message')`)
		if n := dialogs.Load(); n != 0 {
			t.Fatalf("%d dialogs opened", n)
		}
	})

	t.Run("Server", func(t *testing.T) {
		hash(t, ctx, "#server")
		waitJS(t, ctx, `!!document.querySelector('#server-facts') && document.querySelector('code.copy').textContent.includes('AccountName=devstoreaccount1')`)
		screenshot(t, ctx, "server")
	})

	t.Run("NonLoopbackNeedsSignIn", func(t *testing.T) {
		locked := consoleServer(t, ts.app, true)
		run(t, ctx, chromedp.Navigate(locked+"/#tables"))
		waitJS(t, ctx, `!!document.querySelector('#login')`)
		if n := evalJS[int](t, ctx, `document.querySelectorAll('#tables').length`); n != 0 {
			t.Fatal("tables shown before sign-in")
		}
		if st := evalJS[int](t, ctx, `fetch('/api/table/devstoreaccount1/Tables').then(r => r.status)`); st != 401 {
			t.Fatalf("API without sign-in: %d, want 401", st)
		}
		screenshot(t, ctx, "login")
		run(t, ctx, setValue("#login-account", devAccount), setValue("#login-key", "AAAA"), chromedp.Click("#login button"))
		waitJS(t, ctx, `document.querySelector('#login-error').textContent.startsWith('AuthenticationFailed')`)
		run(t, ctx, setValue("#login-key", devKey), chromedp.Click("#login button"))
		waitJS(t, ctx, `[...document.querySelectorAll('#tables a')].length === 2`)
	})
}
