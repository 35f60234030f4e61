package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/tablo/tablo/examples/internal/tablotest"
)

func TestCompoundKey(t *testing.T) {
	svc, rec := tablotest.Start(t).TableService(t, true)
	res, err := Run(context.Background(), svc, tablotest.Writer(t))
	if err != nil {
		t.Fatal(err)
	}
	if res.Review2012.RowKey != "000123_2012" || res.Review2012.Comments != "2012 review of 000123" {
		t.Errorf("2012 review %+v", res.Review2012)
	}
	// Exactly the employee's reviews, in year order, and not the employee entity itself.
	if len(res.AllReviews) != 5 {
		t.Fatalf("%d reviews, want 5", len(res.AllReviews))
	}
	for i, r := range res.AllReviews {
		if want := fmt.Sprintf("000123_%d", 2010+i); r.RowKey != want || r.Comments == "" {
			t.Errorf("review %d: %+v, want %s", i, r, want)
		}
	}
	if res.Employee.LastReview != 2014 || res.Employee.LastName != "L10" {
		t.Errorf("employee %+v", res.Employee)
	}
	p := rec.Plans()
	if p[0].Kind != "point" || p[0].Scanned != 1 {
		t.Errorf("one review: %q", p[0].Raw)
	}
	if p[1].Kind != "row-range" || p[1].Scanned != 5 || p[1].Returned != 5 {
		t.Errorf("an employee's reviews: %q, want a row range reading just them", p[1].Raw)
	}
}
