package sim

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// This file is a DynamoDB global table with two Regions active, in either
// consistency mode, as "How DynamoDB global tables work"
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/V2globaltables_HowItWorks.html)
// describes them:
//
//   - Multi-Region eventual consistency (MREC): each Region has its own
//     replica; "Conditional writes evaluate the condition expression
//     against the version of the item in the Region"; a strongly
//     consistent read returns the latest version "if that item was last
//     updated in the Region where the read occurred, but may return stale
//     data if the item was last updated in a different Region". Writes
//     are replicated "typically within a second", and a Region that is
//     isolated gets what it missed once it is back; concurrent writes of
//     one item in two Regions are settled by "last writer wins" on an
//     internal timestamp. TTL deletes are replicated; transactions are
//     atomic only in the Region that ran them.
//   - Multi-Region strong consistency (MRSC): a write is replicated to a
//     second Region before it succeeds, so every Region reads, and
//     conditions are evaluated on, the latest version: one database here.
//     A write of an item "already being modified in another Region" fails
//     with ReplicatedWriteConflictException (which the SDK does not
//     retry). TTL is not supported, and transactions "will return an
//     error".
//
// A Region's outage (a plan's outage) makes its endpoint fail every
// request and moves new invocations to the other Region; in MREC, what
// it had not yet replicated arrives once it is back.

// replicationLag is drawn per replicated write: usually under a second.
func (d *dynamoWorld) replicationLag() time.Duration {
	r := d.w.s.rng
	if r.IntN(20) == 0 {
		return time.Duration(1000+r.IntN(4000)) * time.Millisecond
	}
	return time.Duration(100+r.IntN(900)) * time.Millisecond
}

// replicate sends a change made in region to the other replicas (MREC).
func (d *dynamoWorld) replicate(region int, ch change) {
	if d.mode != StoreGlobalEventual {
		return
	}
	for to := range d.dbs {
		if to != region {
			d.deliver(region, to, ch, d.w.s.now.Add(d.replicationLag()))
		}
	}
}

// deliver applies ch to the replica of to at t, or, if either Region is
// out then, once both are back: last writer wins by the items' stamps.
func (d *dynamoWorld) deliver(from, to int, ch change, t time.Time) {
	w := d.w
	w.s.at(t, func() {
		if w.regionOut(from) || w.regionOut(to) {
			d.deliver(from, to, ch, w.s.now.Add(time.Second))
			return
		}
		table := d.dbs[to].tables[ch.table]
		if it := table[ch.key]; it != nil && !it.stamp.Before(ch.stamp) {
			if w.trace != nil {
				w.trace.log(nil, "replication of %s to Region %d loses to a later write there", short(ch.key), to)
			}
			return
		}
		table[ch.key] = &ditem{attrs: ch.after, stamp: ch.stamp}
		if w.trace != nil {
			w.trace.log(nil, "replication of %s reaches Region %d", short(ch.key), to)
		}
	})
}

// conflict reports, in strong consistency, a write of keys in region
// while another Region's write of one of them is still being replicated.
func (d *dynamoWorld) conflict(region int, keys []string) bool {
	if d.mode != StoreGlobalStrong {
		return false
	}
	for _, k := range keys {
		if lw, ok := d.lastWrite[k]; ok && lw.region != region && d.w.s.now.Sub(lw.at) < 50*time.Millisecond {
			return true
		}
	}
	return false
}

// description is the table as DescribeTable answers in this mode.
func (d *dynamoWorld) description(name string) *types.TableDescription {
	t := &types.TableDescription{TableName: aws.String(name), TableStatus: types.TableStatusActive}
	switch d.mode {
	case StoreGlobalEventual:
		t.MultiRegionConsistency = types.MultiRegionConsistencyEventual
		t.Replicas = []types.ReplicaDescription{{RegionName: aws.String("us-east-1")}, {RegionName: aws.String("us-west-2")}}
	case StoreGlobalStrong:
		t.MultiRegionConsistency = types.MultiRegionConsistencyStrong
		t.Replicas = []types.ReplicaDescription{{RegionName: aws.String("us-east-1")}, {RegionName: aws.String("us-east-2")}}
		t.GlobalTableWitnesses = []types.GlobalTableWitnessDescription{{RegionName: aws.String("us-west-2")}}
	}
	return t
}
