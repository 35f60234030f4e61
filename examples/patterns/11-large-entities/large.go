package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
)

// Employee keeps the name of the blob that holds its photo; the photo itself (megabytes)
// would not fit: a property holds at most 64 KiB and an entity at most 1 MiB.
type Employee struct {
	PartitionKey string
	RowKey       string
	Name         string
	Photo        string // blob name in the photos container
	PhotoSHA256  string // lets a reader check it got the photo the entity refers to
}

// Result is what the run found, for the test.
type Result struct {
	InlineErr error  // storing the photo as a property
	Stored    []byte // the photo uploaded
	Read      []byte // the photo read back through the entity
	Employee  Employee
}

const (
	table     = "EmployeesLargeEntities"
	container = "photos"
)

// Run creates the table and container, tries the photo as a property, stores it as a blob
// referenced by the entity, reads it back, and deletes everything again.
func Run(ctx context.Context, tables *aztables.ServiceClient, blobs *azblob.Client, out io.Writer) (Result, error) {
	var res Result
	if _, err := tables.CreateTable(ctx, table, nil); err != nil {
		return res, fmt.Errorf("create table: %w", err)
	}
	defer tables.DeleteTable(context.WithoutCancel(ctx), table, nil)
	if _, err := blobs.CreateContainer(ctx, container, nil); err != nil {
		return res, fmt.Errorf("create container: %w", err)
	}
	defer blobs.DeleteContainer(context.WithoutCancel(ctx), container, nil)
	t := tables.NewClient(table)

	photo := make([]byte, 3<<20) // a 3 MiB photo
	rnd := rand.NewChaCha8([32]byte{7})
	_, _ = rnd.Read(photo)
	res.Stored = photo

	// As a property: refused.
	inline, _ := json.Marshal(map[string]any{"PartitionKey": "Sales", "RowKey": "000223", "Photo@odata.type": "Edm.Binary", "Photo": photo[:100<<10]})
	_, res.InlineErr = t.AddEntity(ctx, inline, nil)
	var re *azcore.ResponseError
	if errors.As(res.InlineErr, &re) {
		fmt.Fprintf(out, "a 100 KiB photo as a property: %d %s\n", re.StatusCode, re.ErrorCode)
	}

	// Blob first, then the entity that names it: a reader never finds an entity whose photo
	// is missing. (A crash between the two leaves an unreferenced blob, which the eventually
	// consistent transactions pattern can clean up.)
	sum := sha256.Sum256(photo)
	e := Employee{PartitionKey: "Sales", RowKey: "000223", Name: "John Jones", Photo: "Sales/000223.jpg", PhotoSHA256: fmt.Sprintf("%x", sum)}
	if _, err := blobs.UploadBuffer(ctx, container, e.Photo, photo, nil); err != nil {
		return res, fmt.Errorf("upload photo: %w", err)
	}
	b, _ := json.Marshal(e)
	if _, err := t.UpsertEntity(ctx, b, nil); err != nil {
		return res, fmt.Errorf("write employee: %w", err)
	}
	fmt.Fprintf(out, "photo stored as blob %s/%s (%d bytes); the entity names it\n", container, e.Photo, len(photo))

	// Reading the whole employee is two requests: the entity, then its blob.
	filter := "PartitionKey eq 'Sales' and RowKey eq '000223'"
	fmt.Fprintf(out, "query $filter=%s\n", filter)
	page, err := t.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter}).NextPage(ctx)
	if err != nil || len(page.Entities) != 1 {
		return res, fmt.Errorf("read employee: %d entities, %w", len(page.Entities), err)
	}
	if err := json.Unmarshal(page.Entities[0], &res.Employee); err != nil {
		return res, err
	}
	resp, err := blobs.DownloadStream(ctx, container, res.Employee.Photo, nil)
	if err != nil {
		return res, fmt.Errorf("read photo: %w", err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, resp.Body); err != nil {
		return res, fmt.Errorf("read photo: %w", err)
	}
	res.Read = buf.Bytes()
	got := sha256.Sum256(res.Read)
	fmt.Fprintf(out, "  %s: photo %s, %d bytes, checksum matches: %v\n", res.Employee.Name, res.Employee.Photo, len(res.Read), fmt.Sprintf("%x", got) == res.Employee.PhotoSHA256)
	return res, nil
}
