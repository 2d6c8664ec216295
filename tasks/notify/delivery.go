package notify

import "errors"

// Delivery is what a reader claimed from its scopes' queues, as it hands
// it on: List, the notifications (of whatever type its caller builds from
// the claimed entries: the store makes them from the tasks' records), and
// the Claim on their entries. The reader writes List to its consumer, then
// calls Commit if the write succeeded and Release if it did not; until one
// of them is called (or the reader dies) no other reader gets these
// notifications (see Claim).
type Delivery[T any] struct {
	// List is what to deliver, in the order the tasks ended.
	List []T
	// claim is nil when nothing is claimed (a peek, or nothing pending).
	claim *Claim
}

// NewDelivery is the delivery of list, the notifications of the entries
// c holds.
func NewDelivery[T any](list []T, c *Claim) *Delivery[T] {
	return &Delivery[T]{List: list, claim: c}
}

// Commit removes the delivered notifications from the queue for good.
// Its error says they were delivered but may be delivered again.
func (d *Delivery[T]) Commit() error {
	if d == nil {
		return nil
	}
	return d.claim.Commit()
}

// Release puts the notifications back in their queues, undelivered, for
// the next reader.
func (d *Delivery[T]) Release() error {
	if d == nil {
		return nil
	}
	return d.claim.Release()
}

// Deliver calls write, then commits the notifications if it succeeded and
// releases them if it failed (returning its error).
func (d *Delivery[T]) Deliver(write func() error) error {
	if err := write(); err != nil {
		return errors.Join(err, d.Release())
	}
	return d.Commit()
}
