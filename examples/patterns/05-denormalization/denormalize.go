package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// Employee and Department share the department's partition, so one entity group transaction
// can update both.
type Employee struct {
	PartitionKey string // department
	RowKey       string // "empid_<id>"
	FirstName    string
	LastName     string
	Email        string
}

// Department carries a copy of its manager's details: one point query answers "who runs
// Sales and how do I reach them".
type Department struct {
	PartitionKey string // department
	RowKey       string // "department"
	Name         string
	ManagerID    string
	ManagerName  string // copied from the manager's Employee entity
	ManagerEmail string // copied from the manager's Employee entity
}

// Result is what the run found, for the test.
type Result struct {
	Denormalized Department // the one entity the denormalized design needed
	Manager      Employee   // the manager's own entity after the update
	AfterUpdate  Department // the department after the manager's address changed
}

const table = "DepartmentsDenormalized"

// Run creates the table, stores a department with its manager, reads the department's details
// both ways, changes the manager's address in one transaction, and deletes the table again.
func Run(ctx context.Context, svc *aztables.ServiceClient, out io.Writer) (Result, error) {
	var res Result
	if _, err := svc.CreateTable(ctx, table, nil); err != nil {
		return res, fmt.Errorf("create table: %w", err)
	}
	defer svc.DeleteTable(context.WithoutCancel(ctx), table, nil)
	t := svc.NewClient(table)

	var staff []aztables.TransactionAction
	for i := range 50 {
		e := Employee{PartitionKey: "Sales", RowKey: fmt.Sprintf("empid_%06d", 100+i), FirstName: "F", LastName: fmt.Sprintf("L%d", i), Email: fmt.Sprintf("e%d@contoso.com", i)}
		if i == 23 {
			e.FirstName, e.LastName, e.Email = "Jun", "Cao", "junc@contoso.com"
		}
		staff = append(staff, action(aztables.TransactionTypeAdd, e))
	}
	dept := Department{PartitionKey: "Sales", RowKey: "department", Name: "Sales", ManagerID: "000123", ManagerName: "Jun Cao", ManagerEmail: "junc@contoso.com"}
	staff = append(staff, action(aztables.TransactionTypeAdd, dept))
	if _, err := t.SubmitTransaction(ctx, staff, nil); err != nil {
		return res, fmt.Errorf("load: %w", err)
	}
	fmt.Fprintln(out, "stored the Sales department and its 50 employees in one transaction")

	// Normalized: the department names its manager's id; a second request fetches the manager.
	fmt.Fprintln(out, "normalized: department, then its manager")
	d, err := get[Department](ctx, out, t, "PartitionKey eq 'Sales' and RowKey eq 'department'")
	if err != nil {
		return res, err
	}
	if _, err := get[Employee](ctx, out, t, "PartitionKey eq 'Sales' and RowKey eq 'empid_"+d.ManagerID+"'"); err != nil {
		return res, err
	}

	// Denormalized: the department entity already holds what the page shows.
	fmt.Fprintln(out, "denormalized: the department alone")
	if res.Denormalized, err = get[Department](ctx, out, t, "PartitionKey eq 'Sales' and RowKey eq 'department'"); err != nil {
		return res, err
	}
	fmt.Fprintf(out, "  %s is run by %s <%s>\n", res.Denormalized.Name, res.Denormalized.ManagerName, res.Denormalized.ManagerEmail)

	// The copy stays true: the manager's entity and the department change together.
	mgr, err := get[Employee](ctx, out, t, "PartitionKey eq 'Sales' and RowKey eq 'empid_000123'")
	if err != nil {
		return res, err
	}
	mgr.Email, dept.ManagerEmail = "jun.cao@contoso.com", "jun.cao@contoso.com"
	if _, err := t.SubmitTransaction(ctx, []aztables.TransactionAction{
		action(aztables.TransactionTypeUpdateMerge, mgr),
		action(aztables.TransactionTypeUpdateMerge, dept),
	}, nil); err != nil {
		return res, fmt.Errorf("update manager: %w", err)
	}
	fmt.Fprintln(out, "changed the manager's address on both entities in one transaction")
	if res.Manager, err = get[Employee](ctx, out, t, "PartitionKey eq 'Sales' and RowKey eq 'empid_000123'"); err != nil {
		return res, err
	}
	res.AfterUpdate, err = get[Department](ctx, out, t, "PartitionKey eq 'Sales' and RowKey eq 'department'")
	return res, err
}

func action(kind aztables.TransactionType, entity any) aztables.TransactionAction {
	b, _ := json.Marshal(entity) // structs of strings always marshal
	return aztables.TransactionAction{ActionType: kind, Entity: b}
}

// get runs a point query and decodes its one entity.
func get[T any](ctx context.Context, out io.Writer, t *aztables.Client, filter string) (T, error) {
	var v T
	fmt.Fprintf(out, "query $filter=%s\n", filter)
	page, err := t.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter}).NextPage(ctx)
	if err != nil {
		return v, fmt.Errorf("query %s: %w", filter, err)
	}
	if len(page.Entities) != 1 {
		return v, fmt.Errorf("query %s: %d entities, want 1", filter, len(page.Entities))
	}
	return v, json.Unmarshal(page.Entities[0], &v)
}
