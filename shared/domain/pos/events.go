// Events the POS domain emits: recorded actions only (the Actions table;
// its stream runs the rules, the actions log lists them), each in the
// transaction of the change it tells of. The POS domain reacts to the rule
// domain's OnGrant hook (AddEarned) and declares no hooks of its own.

package pos

// Action types the POS domain records. Those that change the user's app
// balance (a credit, an APP payment, its refund) also carry balanceAfter
// and currency, the balance the change left as its ledger entry shows it
// ("6.50"); ORDER_COMPLETED moves no points itself (its redemptions'
// AWARD_REDEEMED carry their balanceAfter).
const (
	// ActionOrderCompleted: an order was completed (metadata: orderId,
	// value (totalPrice when set, else the value the POS gave, else the
	// sum of its transactions not refunded),
	// totalPrice, transactionsTotal, basket, redemptions, shortCode,
	// scenario, paymentType of a generated order).
	ActionOrderCompleted = "ORDER_COMPLETED"
	// ActionTransactionCreated: a transaction was recorded (metadata: the
	// transaction's amounts, paymentType, orderId, shortCode).
	ActionTransactionCreated = "TRANSACTION_CREATED"
	// ActionTransactionRefunded: a transaction was refunded (metadata:
	// transactionId, orderId, paymentType, amount, balanceRestored,
	// pointsReversed, pointsNotReversed, redemptionsReturned).
	ActionTransactionRefunded = "TRANSACTION_REFUNDED"
	// ActionBalanceCredited: an admin credited the app balance (metadata:
	// amount, reason, balance after as a number, balanceAfter and
	// currency).
	ActionBalanceCredited = "BALANCE_CREDITED"
)
