package web

import (
	"context"
	"log/slog"
	"os"
	"sync/atomic"
)

// requestFields are the fields of every line logged during one request:
// its id and route, known when it starts, and its tenant, known once the
// caller is authenticated (or named a tenant).
type requestFields struct {
	id     string
	route  string
	tenant atomic.Pointer[string]
}

// setTenant records the request's tenant for the lines logged from now on
// (the request's final line included).
func (f *requestFields) setTenant(id string) {
	if id != "" {
		f.tenant.Store(&id)
	}
}

func (f *requestFields) attrs() []slog.Attr {
	a := []slog.Attr{slog.String("requestId", f.id)}
	if f.route != "" {
		a = append(a, slog.String("route", f.route))
	}
	if t := f.tenant.Load(); t != nil {
		a = append(a, slog.String("tenantId", *t))
	}
	return a
}

// fieldsHandler adds a request's fields to each record it handles: those
// of its own request (the logger Logger returns during a request), or
// else those of the context the line was logged with (InfoContext(ctx, ...)
// on a function's base logger). A field the line sets itself is not
// repeated.
type fieldsHandler struct {
	inner  slog.Handler
	fields *requestFields
}

func (h *fieldsHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

func (h *fieldsHandler) Handle(ctx context.Context, r slog.Record) error {
	f := h.fields
	if f == nil {
		f, _ = ctx.Value(fieldsKey).(*requestFields)
	}
	if f == nil {
		return h.inner.Handle(ctx, r)
	}
	set := map[string]bool{}
	r.Attrs(func(a slog.Attr) bool {
		set[a.Key] = true
		return true
	})
	r = r.Clone()
	for _, a := range f.attrs() {
		if !set[a.Key] {
			r.AddAttrs(a)
		}
	}
	return h.inner.Handle(ctx, r)
}

func (h *fieldsHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &fieldsHandler{inner: h.inner.WithAttrs(as), fields: h.fields}
}

func (h *fieldsHandler) WithGroup(name string) slog.Handler {
	return &fieldsHandler{inner: h.inner.WithGroup(name), fields: h.fields}
}

// requestLogger returns base writing every line with the fields of f.
func requestLogger(base *slog.Logger, f *requestFields) *slog.Logger {
	h := base.Handler()
	if fh, ok := h.(*fieldsHandler); ok {
		h = fh.inner
	}
	return slog.New(&fieldsHandler{inner: h, fields: f})
}

// FunctionLogger returns log naming the function in each line ("function"):
// in Lambda NewLogger names it already (AWS_LAMBDA_FUNCTION_NAME), so this
// is for processes that serve several functions (the local stack, tests).
func FunctionLogger(log *slog.Logger, name string) *slog.Logger {
	if os.Getenv("AWS_LAMBDA_FUNCTION_NAME") != "" {
		return log
	}
	return log.With("function", name)
}
