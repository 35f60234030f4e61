package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
)

// The guide's solution: log data in the Blob service, one blob per minute named by its time
// ("2026/11/24/1504/000001.log", as Storage Analytics names its logs), written once a minute
// from a buffer, one delimited line per message. A time range is a listing by name prefix.

const logContainer = "applog"

// BlobOutcome is what the blob design did, for the test.
type BlobOutcome struct {
	Blobs    int     // blobs written (one per minute)
	Listed   int     // blobs the window's listings returned
	Expected []int64 // ids of errors and criticals in the window
	Found    []int64
}

// RunBlobs writes the same log as Run (n messages over 15:00-15:10) into minute blobs and
// answers the window query from them.
func RunBlobs(ctx context.Context, blobs *azblob.Client, n int, out io.Writer) (BlobOutcome, error) {
	var o BlobOutcome
	if _, err := blobs.CreateContainer(ctx, logContainer, nil); err != nil {
		return o, fmt.Errorf("create container: %w", err)
	}
	defer blobs.DeleteContainer(context.WithoutCancel(ctx), logContainer, nil)

	// Buffer a minute, then write it as one blob.
	minutes := map[string]*bytes.Buffer{}
	var order []string
	for i := range n {
		m := Message{At: logStart.Add(logSpan * time.Duration(i) / time.Duration(n)), Source: fmt.Sprintf("web%02d", i%16), Level: 1 + (i*7%10)%4, ID: int64(i)}
		name := m.At.Format("2006/01/02/1504") + "/000001.log"
		if minutes[name] == nil {
			minutes[name] = &bytes.Buffer{}
			order = append(order, name)
		}
		fmt.Fprintf(minutes[name], "%s;%s;%d;%d;request failed\n", m.At.Format(time.RFC3339Nano), m.Source, m.Level, m.ID)
		if m.Level <= 2 && !m.At.Before(logStart.Add(4*time.Minute)) && m.At.Before(logStart.Add(6*time.Minute)) {
			o.Expected = append(o.Expected, m.ID)
		}
	}
	for _, name := range order {
		if _, err := blobs.UploadBuffer(ctx, logContainer, name, minutes[name].Bytes(), nil); err != nil {
			return o, fmt.Errorf("write %s: %w", name, err)
		}
		o.Blobs++
	}
	fmt.Fprintf(out, "blobs: %d messages in %d minute blobs (%s … %s)\n", n, o.Blobs, order[0], order[len(order)-1])

	// 15:04 to 15:06 is two minutes: two prefixes.
	for _, prefix := range []string{"2026/11/24/1504/", "2026/11/24/1505/"} {
		fmt.Fprintf(out, "list %s/%s*\n", logContainer, prefix)
		pager := blobs.NewListBlobsFlatPager(logContainer, &azblob.ListBlobsFlatOptions{Prefix: &prefix})
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				return o, fmt.Errorf("list: %w", err)
			}
			for _, b := range page.Segment.BlobItems {
				o.Listed++
				ids, err := errorsIn(ctx, blobs, *b.Name)
				if err != nil {
					return o, err
				}
				o.Found = append(o.Found, ids...)
			}
		}
	}
	fmt.Fprintf(out, "  %d blobs read, %d errors and critical messages between 15:04 and 15:06\n", o.Listed, len(o.Found))
	return o, nil
}

// errorsIn reads one log blob and returns the ids of its errors and critical messages.
func errorsIn(ctx context.Context, blobs *azblob.Client, name string) ([]int64, error) {
	resp, err := blobs.DownloadStream(ctx, logContainer, name, nil)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	defer resp.Body.Close()
	var ids []int64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		f := strings.Split(sc.Text(), ";")
		if len(f) < 4 {
			continue
		}
		level, _ := strconv.Atoi(f[2])
		if id, err := strconv.ParseInt(f[3], 10, 64); err == nil && level <= 2 {
			ids = append(ids, id)
		}
	}
	return ids, sc.Err()
}
