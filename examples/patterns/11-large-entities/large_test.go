package main

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"

	"github.com/tablo/tablo/examples/internal/tablotest"
)

func TestLargeEntities(t *testing.T) {
	srv := tablotest.StartWith(t, "blob")
	tables, _ := srv.TableService(t, true)
	blobs, err := azblob.NewClientFromConnectionString(srv.Conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), tables, blobs, tablotest.Writer(t))
	if err != nil {
		t.Fatal(err)
	}
	var re *azcore.ResponseError
	if !errors.As(res.InlineErr, &re) || re.StatusCode != 400 || re.ErrorCode != "PropertyValueTooLarge" {
		t.Errorf("photo as a property: %v, want 400 PropertyValueTooLarge", res.InlineErr)
	}
	if res.Employee.Photo != "Sales/000223.jpg" || !bytes.Equal(res.Read, res.Stored) {
		t.Errorf("employee %+v; photo read back equal: %v", res.Employee, bytes.Equal(res.Read, res.Stored))
	}
}
