package profile

import (
	"context"
	"fmt"
	"net/mail"
	"regexp"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

// Credential providers of the identifiers users are known by.
const (
	ProviderEmail  = "EMAIL"
	ProviderMobile = "MOBILE"
)

// Item layout of a credential's uniqueness item in the Users table (the
// users domain writes it; this package reads who owns an identifier):
//
//	pk = <t>#CREDID#<provider>#<identifier>   sk = CREDID   {userId, expiresAt}

// CredentialSK is the sort key of a credential's uniqueness item.
const CredentialSK = "CREDID"

// CredentialPK is the partition key of a credential's uniqueness item.
func CredentialPK(tenantID, provider, id string) string {
	return tenantID + "#CREDID#" + provider + "#" + id
}

// mobileRe is compiled on first use, not at every cold start.
var mobileRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\+?[0-9]{6,15}$`) })

// NormalizeCredential returns the stored form of an identifier: an e-mail
// address lower-cased, a mobile number without spaces, dashes, dots or
// brackets (a leading + kept). An identifier that is neither is
// VALIDATION_FAILED naming credentials.id (or .provider).
func NormalizeCredential(provider, id string) (string, error) {
	id = strings.TrimSpace(id)
	switch provider {
	case ProviderEmail:
		a, err := mail.ParseAddress(id)
		if err != nil || a.Address != id || !strings.Contains(id[strings.LastIndex(id, "@"):], ".") || len(id) > 254 {
			return "", apierr.Invalid("credentials.id", "must be an e-mail address")
		}
		return strings.ToLower(id), nil
	case ProviderMobile:
		n := strings.Map(func(r rune) rune {
			switch r {
			case ' ', '-', '.', '(', ')':
				return -1
			}
			return r
		}, id)
		if !mobileRe().MatchString(n) {
			return "", apierr.Invalid("credentials.id", "must be a mobile number of 6 to 15 digits, optionally starting with +")
		}
		return n, nil
	default:
		return "", apierr.Invalid("credentials.provider", "must be EMAIL or MOBILE")
	}
}

// Owners returns the users holding a bare e-mail address or mobile number
// (read as either provider); none is an empty list.
func (r *Reader) Owners(ctx context.Context, tenantID, raw string) ([]string, error) {
	var out []string
	now := r.Clock.Now()
	for _, p := range []string{ProviderEmail, ProviderMobile} {
		id, err := NormalizeCredential(p, raw)
		if err != nil {
			continue
		}
		res, err := r.DB.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: aws.String(r.Table), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{
				"pk": &types.AttributeValueMemberS{Value: CredentialPK(tenantID, p, id)},
				"sk": &types.AttributeValueMemberS{Value: CredentialSK},
			},
		})
		if err != nil {
			return nil, fmt.Errorf("find credential: %w", err)
		}
		if res.Item == nil {
			continue
		}
		var ci struct {
			UserID    string `dynamodbav:"userId"`
			ExpiresAt int64  `dynamodbav:"expiresAt"`
		}
		if err := attributevalue.UnmarshalMap(res.Item, &ci); err != nil {
			return nil, fmt.Errorf("find credential: %w", err)
		}
		if ci.ExpiresAt > 0 && ci.ExpiresAt <= now.Unix() {
			continue
		}
		out = append(out, ci.UserID)
	}
	return out, nil
}
