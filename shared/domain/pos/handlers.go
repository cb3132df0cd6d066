package pos

import (
	"net/http"

	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Routes returns the routes of the pos function. Every POST and PUT takes
// the Idempotency-Key header (web.Route.Idempotent).
func (s *Service) Routes() []web.Route {
	return []web.Route{
		{Method: "POST", Path: "/users/{userId}/credits", Access: web.Admin, Handler: web.Serve(http.StatusOK, s.handleCredit), Idempotent: true},
		// The balance ledger read its paging parameters before it checked
		// the caller (Before).
		{Method: "GET", Path: "/users/{userId}/balance/ledger", Access: web.Self, Before: web.CheckPaging, Handler: web.Serve(http.StatusOK, s.handleBalanceLedger)},
		{Method: "POST", Path: "/users/{userId}/orders", Access: web.Admin, Handler: web.Serve(http.StatusCreated, s.handleCreateOrder), Idempotent: true},
		{Method: "GET", Path: "/orders/{orderId}", Access: web.Authenticated, Handler: web.Serve(http.StatusOK, s.handleGetOrder)},
		{Method: "PUT", Path: "/orders/{orderId}", Access: web.Admin, Handler: web.Serve(http.StatusOK, s.handleUpdateOrder), Idempotent: true},
		{Method: "POST", Path: "/users/{userId}/transactions", Access: web.Admin, Handler: web.Serve(http.StatusCreated, s.handleCreateTransaction(true)), Idempotent: true},
		{Method: "POST", Path: "/transactions", Access: web.Admin, Handler: web.Serve(http.StatusCreated, s.handleCreateTransaction(false)), Idempotent: true},
		{Method: "GET", Path: "/transactions", Access: web.Admin, Handler: web.Serve(http.StatusOK, s.handleFindTransaction)},
		{Method: "PUT", Path: "/transactions/{transactionId}", Access: web.Admin, Handler: web.Serve(http.StatusOK, s.handleRefund), Idempotent: true},
	}
}

// handleCredit serves POST /users/{userId}/credits (admin): 200 with the
// new balance or the award.
func (s *Service) handleCredit(r *http.Request, caller actor.Actor) (CreditResult, error) {
	in, err := web.Decoded[CreditInput](r)
	if err != nil {
		return CreditResult{}, err
	}
	return s.Credit(r.Context(), caller, r.PathValue("userId"), in)
}

// handleCreateOrder serves POST /users/{userId}/orders (admin): 201 with
// the OPEN order. The body may be absent.
func (s *Service) handleCreateOrder(r *http.Request, caller actor.Actor) (Order, error) {
	var in OrderInput
	if err := web.DecodeOptional(r, &in); err != nil {
		return Order{}, err
	}
	return s.CreateOrder(r.Context(), caller, r.PathValue("userId"), in)
}

// handleGetOrder serves GET /orders/{orderId} (an admin, or the order's
// user).
func (s *Service) handleGetOrder(r *http.Request, caller actor.Actor) (Order, error) {
	return s.GetOrder(r.Context(), caller, r.PathValue("orderId"))
}

// handleUpdateOrder serves PUT /orders/{orderId} (admin): 200 with the
// order (COMPLETED when the body said so).
func (s *Service) handleUpdateOrder(r *http.Request, caller actor.Actor) (Order, error) {
	in, err := web.Decoded[OrderInput](r)
	if err != nil {
		return Order{}, err
	}
	return s.UpdateOrder(r.Context(), caller, r.PathValue("orderId"), in)
}

// handleCreateTransaction serves POST /users/{userId}/transactions (inPath)
// and POST /transactions (userId in the body), admin: 201 with the
// transaction (also for a repeat with the same shortCode and body).
func (s *Service) handleCreateTransaction(inPath bool) web.Op[Transaction] {
	return func(r *http.Request, caller actor.Actor) (Transaction, error) {
		in, err := web.Decoded[TransactionInput](r)
		if err != nil {
			return Transaction{}, err
		}
		userID := in.UserID
		if inPath {
			userID = r.PathValue("userId")
			if in.UserID != "" && in.UserID != userID {
				return Transaction{}, apierr.Invalid("userId", "must be the path's user (or left out)")
			}
		}
		t, _, err := s.CreateTransaction(r.Context(), caller, userID, in)
		return t, err
	}
}

// handleFindTransaction serves GET /transactions?shortCode= (admin): the
// transaction of a POS short code; and GET
// /transactions?metadata[key]=value (admin): a page of the transactions
// whose metadata has that value, newest first.
func (s *Service) handleFindTransaction(r *http.Request, caller actor.Actor) (any, error) {
	q := r.URL.Query()
	key, value, search, err := MetadataQuery(q)
	switch {
	case err != nil:
		return nil, err
	case search && q.Has("shortCode"):
		return nil, apierr.Invalid("shortCode", "send either shortCode or one metadata[key]=value")
	case search:
		limit, start, err := web.Paging(r)
		if err != nil {
			return nil, err
		}
		return s.SearchTransactions(r.Context(), caller, key, value, limit, start)
	}
	return s.FindTransaction(r.Context(), caller, q.Get("shortCode"))
}

// handleRefund serves PUT /transactions/{transactionId}?refund=true
// (admin): 200 with the refunded transaction and what the refund did; a
// second refund is 409. Without refund=true it is 422: a transaction is
// not otherwise changed. A body is not needed (one sent is read and
// ignored, within the size limit).
func (s *Service) handleRefund(r *http.Request, caller actor.Actor) (RefundResult, error) {
	refund, err := web.BoolParam(r, "refund", false)
	if err != nil {
		return RefundResult{}, err
	}
	if !refund {
		return RefundResult{}, apierr.Invalid("refund", "must be true: a transaction only changes by its refund")
	}
	if _, err := web.ReadBody(r, web.MaxBodyBytes); err != nil {
		return RefundResult{}, err
	}
	return s.Refund(r.Context(), caller, r.PathValue("transactionId"))
}
