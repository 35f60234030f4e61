package postgres_test

import (
	"context"
	"testing"

	"github.com/tablo/tablo/internal/store"
	"github.com/tablo/tablo/internal/store/postgres"
	"github.com/tablo/tablo/internal/store/postgres/pgtest"
	"github.com/tablo/tablo/internal/store/storetest"
)

func open(t *testing.T, url string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), postgres.Options{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestConformance(t *testing.T) {
	pgtest.Base(t)
	storetest.Run(t, func(t *testing.T) store.Store { return open(t, pgtest.URL(t)) })
}
