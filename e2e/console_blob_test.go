package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// The console's Blob view in a real browser: containers, a folder view by delimiter with
// breadcrumbs and paging by marker, an upload and a download whose bytes are compared,
// metadata, delete, and blob names and metadata holding markup shown as text.
func TestConsoleBrowserBlobs(t *testing.T) {
	ops := startOpsServer(t, t.TempDir(), nil)
	ts := &testServer{app: ops.app, endpoint: ops.base + "/" + devAccount}
	ctx, dialogs := startBrowser(t)
	bc := blobClient(t, ts)
	bg := context.Background()
	put := func(container, name string, body []byte, o *azblob.UploadBufferOptions) {
		t.Helper()
		if _, err := bc.UploadBuffer(bg, container, name, body, o); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []string{"photos", "xss"} {
		if _, err := bc.CreateContainer(bg, c, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"readme.txt", "2024/jan/a.jpg", "2024/jan/b.jpg", "2024/feb/c.jpg", "2025/d.jpg"} {
		put("photos", n, []byte("data of "+n), nil)
	}
	const xssName = `<img src=x onerror=alert(1)>.txt`
	const xssMeta = `<script>alert(2)</script>`
	put("xss", xssName, []byte("x"), &azblob.UploadBufferOptions{Metadata: map[string]*string{"note": to.Ptr(xssMeta)}})
	put("xss", "page.html", []byte(`<script>alert(3)</script>`), &azblob.UploadBufferOptions{HTTPHeaders: &blob.HTTPHeaders{BlobContentType: to.Ptr("text/html")}})

	base := ops.admin
	names := func() string {
		return evalJS[string](t, ctx, `[...document.querySelectorAll('#blobs tr[data-name]')].map(tr => tr.dataset.name).join(',')`)
	}
	run(t, ctx, chromedp.Navigate(base+"/#blobs"))

	t.Run("Containers", func(t *testing.T) {
		waitJS(t, ctx, `[...document.querySelectorAll('#containers a')].map(a => a.textContent).join(',') === 'photos,xss'`)
		run(t, ctx, setValue("#new-container", "scratch"), chromedp.Click("#new-container + button"))
		waitJS(t, ctx, `[...document.querySelectorAll('#containers a')].map(a => a.textContent).join(',') === 'photos,scratch,xss'`)
		screenshot(t, ctx, "containers")
		evalJS[bool](t, ctx, `(window.confirm = () => true, true)`)
		run(t, ctx, chromedp.Click(`#containers tr[data-container="scratch"] button`))
		waitJS(t, ctx, `document.querySelector('#status').textContent === 'Deleted scratch' && document.querySelectorAll('#containers a').length === 2`)
	})

	t.Run("FolderNavigation", func(t *testing.T) {
		hash(t, ctx, "#blobs/photos")
		waitJS(t, ctx, `document.querySelector('#blob-page-info')?.textContent === 'Page 1: 3 entries, last page'`)
		if got := names(); got != "2024/,2025/,readme.txt" {
			t.Fatalf("top level %q, want the two folders and the one blob", got)
		}
		// Two entries a page: the marker of page 1 leads to page 2 and back.
		run(t, ctx, setValue("#blob-page-size", "2"))
		evalJS[bool](t, ctx, `document.querySelector('#blob-page-size').dispatchEvent(new Event('change'))`)
		waitJS(t, ctx, `document.querySelector('#blob-page-info').textContent === 'Page 1: 2 entries, more follow'`)
		run(t, ctx, chromedp.Click("#blob-next"))
		waitJS(t, ctx, `document.querySelector('#blob-page-info').textContent === 'Page 2: 1 entries, last page'`)
		if got := names(); got != "readme.txt" {
			t.Fatalf("page 2 %q", got)
		}
		run(t, ctx, chromedp.Click("#blob-prev"))
		waitJS(t, ctx, `document.querySelector('#blob-page-info').textContent === 'Page 1: 2 entries, more follow'`)
		run(t, ctx, chromedp.Click(`#blobs tr[data-name="2024/"] a`))
		waitJS(t, ctx, `document.querySelector('#breadcrumbs')?.textContent === 'Containers / photos / 2024' && document.querySelector('#blob-page-info')?.textContent.startsWith('Page 1: 2 ')`)
		if got := names(); got != "2024/feb/,2024/jan/" {
			t.Fatalf("2024/ holds %q", got)
		}
		run(t, ctx, chromedp.Click(`#blobs tr[data-name="2024/jan/"] a`))
		waitJS(t, ctx, `document.querySelector('#breadcrumbs')?.textContent === 'Containers / photos / 2024 / jan' && document.querySelectorAll('#blobs tr.blob').length === 2`)
		if got := names(); got != "2024/jan/a.jpg,2024/jan/b.jpg" {
			t.Fatalf("2024/jan/ holds %q", got)
		}
		// A breadcrumb goes back up.
		run(t, ctx, chromedp.Click(chromedp.Search(`//h2[@id="breadcrumbs"]/a[text()="2024"]`)))
		waitJS(t, ctx, `document.querySelector('#breadcrumbs')?.textContent === 'Containers / photos / 2024' && document.querySelectorAll('#blobs tr.folder').length === 2`)
	})

	t.Run("UploadDownload", func(t *testing.T) {
		// Larger than the console's 4 MiB limit for Table and Queue bodies: an upload streams.
		data := make([]byte, 5<<20+12345)
		_, _ = rand.Read(data)
		src := filepath.Join(t.TempDir(), "upload.bin")
		if err := os.WriteFile(src, data, 0o644); err != nil {
			t.Fatal(err)
		}
		hash(t, ctx, "#blobs/photos/2024/jan/")
		waitJS(t, ctx, `document.querySelectorAll('#blobs tr.blob').length === 2`)
		run(t, ctx, chromedp.SetUploadFiles("#upload-file", []string{src}), setValue("#upload-meta", "camera=test, roll=7"), chromedp.Click("#upload-go"))
		waitJS(t, ctx, `document.querySelector('#status').textContent === 'Uploaded 2024/jan/upload.bin' && !!document.querySelector('#blobs tr[data-name="2024/jan/upload.bin"]')`)
		got, err := bc.DownloadBuffer(bg, "photos", "2024/jan/upload.bin", make([]byte, len(data)), nil)
		if err != nil || got != int64(len(data)) {
			t.Fatalf("download through the SDK: %d bytes, %v", got, err)
		}
		props, err := bc.ServiceClient().NewContainerClient("photos").NewBlobClient("2024/jan/upload.bin").GetProperties(bg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if *props.ContentLength != int64(len(data)) || props.Metadata["Camera"] == nil || *props.Metadata["Camera"] != "test" {
			t.Fatalf("uploaded blob: %d bytes, metadata %v", *props.ContentLength, props.Metadata)
		}
		waitJS(t, ctx, `document.querySelector('#blobs tr[data-name="2024/jan/upload.bin"] td.meta').textContent === 'camera=test, roll=7'`)
		screenshot(t, ctx, "blobs")

		// Properties, then the download link: the file saved equals what was uploaded.
		run(t, ctx, chromedp.Click(`#blobs tr[data-name="2024/jan/upload.bin"] a`))
		waitJS(t, ctx, `document.querySelector('#blob-props td[data-prop="Size"]')?.textContent === '5.0 MiB (`+strconv.Itoa(len(data))+` bytes)'`)
		screenshot(t, ctx, "blob")
		dir := t.TempDir()
		if _, err := chromedp.Call(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
			Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir}); err != nil {
			t.Fatal(err)
		}
		run(t, ctx, chromedp.Click("#download"))
		if back := waitFileSize(t, filepath.Join(dir, "upload.bin"), len(data)); !bytes.Equal(back, data) {
			t.Fatalf("downloaded %d bytes that differ from the %d uploaded", len(back), len(data))
		}

		// Metadata edit, then delete.
		run(t, ctx, setValue(`#meta-rows tr.meta:nth-child(2) .m-value`, "8"), chromedp.Click("#save-meta"))
		waitJS(t, ctx, `document.querySelector('#status').textContent === 'Saved metadata'`)
		props, _ = bc.ServiceClient().NewContainerClient("photos").NewBlobClient("2024/jan/upload.bin").GetProperties(bg, nil)
		if props.Metadata["Roll"] == nil || *props.Metadata["Roll"] != "8" || props.Metadata["Camera"] == nil {
			t.Fatalf("metadata after the edit: %v", props.Metadata)
		}
		evalJS[bool](t, ctx, `(window.confirm = () => true, true)`)
		run(t, ctx, chromedp.Click("#delete-blob"))
		waitJS(t, ctx, `document.querySelector('#breadcrumbs')?.textContent === 'Containers / photos / 2024 / jan' && document.querySelectorAll('#blobs tr.blob').length === 2`)
		if _, err := bc.ServiceClient().NewContainerClient("photos").NewBlobClient("2024/jan/upload.bin").GetProperties(bg, nil); err == nil {
			t.Fatal("the deleted blob is still there")
		}
	})

	t.Run("XSS", func(t *testing.T) {
		hash(t, ctx, "#blobs/xss")
		waitJS(t, ctx, `document.querySelectorAll('#blobs tr.blob').length === 2`)
		cell := evalJS[string](t, ctx, `document.querySelector('#blobs tr.blob a').textContent`)
		meta := evalJS[string](t, ctx, `document.querySelector('#blobs tr.blob td.meta').textContent`)
		if cell != xssName || meta != "note="+xssMeta {
			t.Fatalf("cells %q %q, want the name and metadata as text", cell, meta)
		}
		run(t, ctx, chromedp.Click(`#blobs tr.blob a`))
		waitJS(t, ctx, `document.querySelector('#blob-props td[data-prop="Name"]')?.textContent === `+jsString(xssName))
		if v := evalJS[string](t, ctx, `document.querySelector('#meta-rows .m-value').value`); v != xssMeta {
			t.Fatalf("metadata editor holds %q", v)
		}
		if n := evalJS[int](t, ctx, `document.querySelectorAll('#main script, #main img').length`); n != 0 {
			t.Fatalf("%d elements made from data", n)
		}
		time.Sleep(200 * time.Millisecond) // an onerror handler would have fired by now
		if n := dialogs.Load(); n != 0 {
			t.Fatalf("%d dialogs opened", n)
		}
	})

	t.Run("BlobServedAsData", func(t *testing.T) {
		// An HTML blob fetched through the console is an attachment in a sandbox, never a page
		// of the console's origin (whose CSP allows the console's own scripts).
		resp, err := http.Get(base + "/api/blob/" + devAccount + "/xss/page.html")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		h := resp.Header
		if resp.StatusCode != 200 || string(body) != `<script>alert(3)</script>` || h.Get("Content-Type") != "application/octet-stream" ||
			!strings.HasPrefix(h.Get("Content-Security-Policy"), "sandbox") || h.Get("Content-Disposition") != "attachment" ||
			h.Get("X-Console-Content-Type") != "text/html" {
			t.Fatalf("GET of an HTML blob: %d %q %v", resp.StatusCode, body, h)
		}
	})
}

// waitFileSize waits for a download of size bytes and returns its content.
func waitFileSize(t *testing.T, path string, size int) []byte {
	t.Helper()
	for range 300 {
		if b, err := os.ReadFile(path); err == nil && len(b) >= size {
			return b
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no download of %d bytes at %s", size, path)
	return nil
}
