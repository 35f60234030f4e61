package partition

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteText prints a snapshot as tables for a terminal (`tablo partitions`).
func WriteText(w io.Writer, s *Snapshot) {
	mode := "observing (targets not enforced)"
	if s.Emulate {
		mode = "emulating targets"
	}
	t := s.Targets
	fmt.Fprintf(w, "%s  %s; partition %d entities/s, queue %d messages/s, blob %d requests/s, account %d requests/s, server %d entities/s, %d servers, heat %s, move %s; rates over %s\n",
		s.Time, mode, t.PartitionEntitiesPerSec, t.QueueMessagesPerSec, t.BlobRequestsPerSec, t.AccountRequestsPerSec, t.ServerEntitiesPerSec, t.Servers, t.Heat, t.Move, s.Window)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nACCOUNT\tREQUESTS/s\tREQUESTS\tTABLE\tQUEUE\tBLOB\tBUSY")
	for _, a := range s.Accounts {
		by := a.RequestsByService
		fmt.Fprintf(tw, "%s\t%.0f\t%d\t%d\t%d\t%d\t%d\n", a.Name, a.RequestsPerSec, a.Requests, by["table"], by["queue"], by["blob"], a.ServerBusy)
	}
	fmt.Fprintln(tw, "\nTABLE / QUEUE / CONTAINER\tREAD ops/s\tWRITE ops/s\tREAD ent/s\tWRITE ent/s\tBUSY/s\tP50\tP99\tRANGES\tKEYS")
	for _, tb := range s.Tables {
		r := tb.Rates
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%s\t%s\t%d\t%d\n", tableName(tb.Service, tb.Account, tb.Name),
			r.ReadOps, r.WriteOps, r.ReadEntities, r.WriteEntities, r.Busy, tb.LatencyP50, tb.LatencyP99, len(tb.Ranges), tb.TrackedKeys)
	}
	fmt.Fprintln(tw, "\nRANGE\tTABLE\tFROM\tTO\tSERVER\tENT/s\tDEMAND/s\tSTATE")
	for _, tb := range s.Tables {
		for _, rg := range tb.Ranges {
			state := ""
			if rg.Offline {
				state = "moving"
			}
			hi := rg.High
			if hi == "" {
				hi = "(end)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%q\t%q\t%d\t%.0f\t%.0f\t%s\n", rg.Name, tableName(tb.Service, "", tb.Name), rg.Low, hi, rg.Server, rg.Rates.Entities(), rg.Rates.Demand, state)
		}
	}
	fmt.Fprintln(tw, "\nHOT PARTITION\tIN\tENT/s\tDEMAND/s\tOF TARGET\tCOUNT±ERR")
	for _, p := range s.Hottest {
		fmt.Fprintf(tw, "%q\t%s\t%.0f\t%.0f\t%.0f%%\t%d±%d\n", p.Key, tableName(p.Service, "", p.Table), p.Rates.Entities(), p.Rates.Demand,
			100*p.OfTarget, p.Count, p.Err)
	}
	fmt.Fprintln(tw, "\nSERVER\tRANGES\tENT/s\tDEMAND/s\tHOT")
	for _, sv := range s.Servers {
		if sv.Ranges == 0 && sv.Rates.Demand == 0 {
			continue
		}
		fmt.Fprintf(tw, "s%d\t%d\t%.0f\t%.0f\t%v\n", sv.ID, sv.Ranges, sv.Rates.Entities(), sv.Rates.Demand, sv.Hot)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nServerBusy: account %d, partition %d, server %d, moving range %d; faults injected: %v",
		s.Busy["account"], s.Busy["partition"], s.Busy["server"], s.Busy["moving"], s.Faults.Injected)
	if s.Faults.Spec != "" {
		fmt.Fprintf(w, " (%s)", s.Faults.Spec)
	}
	fmt.Fprintln(w)
	for _, e := range s.Events[max(0, len(s.Events)-5):] {
		fmt.Fprintf(w, "%s %s %s/%s %s %s %s\n", e.Time, e.Kind, e.Account, e.Table, e.Range, e.New, e.Key)
	}
}

// tableName names a table, queue or container for the terminal: "acct/name", with the
// service in front unless it is a table ("queue:acct/name").
func tableName(service, account, name string) string {
	if account != "" {
		name = account + "/" + name
	}
	if service != "" && service != "table" {
		name = service + ":" + name
	}
	return name
}
