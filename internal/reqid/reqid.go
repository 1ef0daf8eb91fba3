// Package reqid carries a request's id (the S3 x-amz-request-id) in its
// context, and adds it to every log record emitted with that context.
package reqid

import (
	"context"
	"log/slog"
)

type ctxKey struct{}

// With returns ctx carrying id.
func With(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, ctxKey{}, id)
}

// From returns the id ctx carries, or "".
func From(ctx context.Context) string {
	id, _ := ctx.Value(ctxKey{}).(string)
	return id
}

// Attr is the log attribute's key.
const Attr = "request_id"

// Handler wraps h so that a record logged with a context carrying an id
// gets a request_id attribute, unless it has one already.
func Handler(h slog.Handler) slog.Handler { return handler{h} }

type handler struct{ slog.Handler }

func (h handler) Handle(ctx context.Context, r slog.Record) error {
	if id := From(ctx); id != "" {
		has := false
		r.Attrs(func(a slog.Attr) bool {
			has = a.Key == Attr
			return !has
		})
		if !has {
			r = r.Clone()
			r.AddAttrs(slog.String(Attr, id))
		}
	}
	return h.Handler.Handle(ctx, r)
}

func (h handler) WithAttrs(as []slog.Attr) slog.Handler { return handler{h.Handler.WithAttrs(as)} }
func (h handler) WithGroup(name string) slog.Handler    { return handler{h.Handler.WithGroup(name)} }
