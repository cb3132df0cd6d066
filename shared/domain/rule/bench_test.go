package rule_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/loyalty-platform/platform/shared/platform/actor"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// BenchmarkPaymentWith1000Rules measures a card payment (POST
// /transactions: its generated order completes and the rules run in the
// request) on a tenant with 1,000 ORDER_COMPLETED rules, 5 of which match
// and grant a point, as the bench's rules row does. The stream handler
// runs beside it on the same DynamoDB Local, as in the local stack.
//
//	go run ./localstack/cmd/testenv -- go test -run '^$' -bench PaymentWith1000Rules -cpuprofile cpu.out ./shared/rule/
func BenchmarkPaymentWith1000Rules(b *testing.B) {
	h := ts.New(b)
	uid := shopper(b, h, h.Admin(), "Bench")
	p := newPerk(b, h, h.Admin(), nil)
	admin := actor.Actor{TenantID: h.Tenant.ID, Service: true}
	for i := range 1000 {
		c := cond("metadata.value", "GT", 1_000_000)
		if i < 5 {
			c = cond("metadata.value", "GTE", 0)
		}
		body, err := json.Marshal(ruleBody("ORDER_COMPLETED", []map[string]any{grant(p, 1)}, c))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := h.Deps.Rules.Create(context.Background(), admin, body); err != nil {
			b.Fatal(err)
		}
	}
	pay := func(i int) {
		h.Do("POST", "/transactions", map[string]any{"userId": uid, "shortCode": fmt.Sprintf("B-%d", i),
			"totalPrice": 3.5, "paymentType": "CARD_AT_POS"}, h.Admin()).Expect(b, 201, "")
	}
	pay(-1) // the rules into the cache
	h.WaitStreams()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		pay(i)
	}
	b.StopTimer()
	h.WaitStreams()
}
