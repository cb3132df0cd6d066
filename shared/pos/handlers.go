package pos

import (
	"net/http"

	"github.com/loyalty-platform/platform/shared/apierr"
	"github.com/loyalty-platform/platform/shared/web"
)

// Routes returns the routes of the pos function.
func (s *Service) Routes() []web.Route {
	return []web.Route{
		{Method: "POST", Path: "/users/{userId}/credits", Handler: s.handleCredit},
		{Method: "POST", Path: "/users/{userId}/orders", Handler: s.handleCreateOrder},
		{Method: "GET", Path: "/orders/{orderId}", Handler: s.handleGetOrder},
		{Method: "PUT", Path: "/orders/{orderId}", Handler: s.handleUpdateOrder},
		{Method: "POST", Path: "/users/{userId}/transactions", Handler: s.handleCreateTransaction(true)},
		{Method: "POST", Path: "/transactions", Handler: s.handleCreateTransaction(false)},
		{Method: "GET", Path: "/transactions", Handler: s.handleFindTransaction},
		{Method: "PUT", Path: "/transactions/{transactionId}", Handler: s.handleRefund},
	}
}

// handleCredit serves POST /users/{userId}/credits (admin): 200 with the
// new balance or the award.
func (s *Service) handleCredit(w http.ResponseWriter, r *http.Request) {
	caller := web.CallerOf(r)
	if err := caller.RequireAdmin(); err != nil {
		web.Error(w, r, err)
		return
	}
	var in CreditInput
	if err := web.Decode(r, &in); err != nil {
		web.Error(w, r, err)
		return
	}
	res, err := s.Credit(r.Context(), caller, r.PathValue("userId"), in)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, res)
}

// handleCreateOrder serves POST /users/{userId}/orders (admin): 201 with
// the OPEN order.
func (s *Service) handleCreateOrder(w http.ResponseWriter, r *http.Request) {
	caller := web.CallerOf(r)
	if err := caller.RequireAdmin(); err != nil {
		web.Error(w, r, err)
		return
	}
	var in OrderInput
	if err := web.DecodeOptional(r, &in); err != nil {
		web.Error(w, r, err)
		return
	}
	o, err := s.CreateOrder(r.Context(), caller, r.PathValue("userId"), in)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusCreated, o)
}

// handleGetOrder serves GET /orders/{orderId} (an admin, or the order's
// user).
func (s *Service) handleGetOrder(w http.ResponseWriter, r *http.Request) {
	o, err := s.GetOrder(r.Context(), web.CallerOf(r), r.PathValue("orderId"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, o)
}

// handleUpdateOrder serves PUT /orders/{orderId} (admin): 200 with the
// order (COMPLETED when the body said so).
func (s *Service) handleUpdateOrder(w http.ResponseWriter, r *http.Request) {
	caller := web.CallerOf(r)
	if err := caller.RequireAdmin(); err != nil {
		web.Error(w, r, err)
		return
	}
	var in OrderInput
	if err := web.Decode(r, &in); err != nil {
		web.Error(w, r, err)
		return
	}
	o, err := s.UpdateOrder(r.Context(), caller, r.PathValue("orderId"), in)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, o)
}

// handleCreateTransaction serves POST /users/{userId}/transactions (inPath)
// and POST /transactions (userId in the body), admin: 201 with the
// transaction (also for a repeat with the same shortCode and body).
func (s *Service) handleCreateTransaction(inPath bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		caller := web.CallerOf(r)
		if err := caller.RequireAdmin(); err != nil {
			web.Error(w, r, err)
			return
		}
		var in TransactionInput
		if err := web.Decode(r, &in); err != nil {
			web.Error(w, r, err)
			return
		}
		userID := in.UserID
		if inPath {
			userID = r.PathValue("userId")
			if in.UserID != "" && in.UserID != userID {
				web.Error(w, r, apierr.Invalid("userId", "must be the path's user (or left out)"))
				return
			}
		}
		t, _, err := s.CreateTransaction(r.Context(), caller, userID, in)
		if err != nil {
			web.Error(w, r, err)
			return
		}
		web.JSON(w, http.StatusCreated, t)
	}
}

// handleFindTransaction serves GET /transactions?shortCode= (admin): the
// transaction of a POS short code.
func (s *Service) handleFindTransaction(w http.ResponseWriter, r *http.Request) {
	t, err := s.FindTransaction(r.Context(), web.CallerOf(r), r.URL.Query().Get("shortCode"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, t)
}

// handleRefund serves PUT /transactions/{transactionId}?refund=true
// (admin): 200 with the refunded transaction and what the refund did; a
// second refund is 409. Without refund=true it is 422: a transaction is
// not otherwise changed.
func (s *Service) handleRefund(w http.ResponseWriter, r *http.Request) {
	caller := web.CallerOf(r)
	if err := caller.RequireAdmin(); err != nil {
		web.Error(w, r, err)
		return
	}
	refund, err := web.BoolParam(r, "refund", false)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	if !refund {
		web.Error(w, r, apierr.Invalid("refund", "must be true: a transaction only changes by its refund"))
		return
	}
	if _, err := web.ReadBody(r, web.MaxBodyBytes); err != nil {
		web.Error(w, r, err)
		return
	}
	res, err := s.Refund(r.Context(), caller, r.PathValue("transactionId"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, res)
}
