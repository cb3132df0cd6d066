package sam_test

import (
	"reflect"
	"testing"

	"github.com/loyalty-platform/platform/shared/contract/sam"
)

const policyTemplate = `
Resources:
  ATable:
    Type: AWS::DynamoDB::Table
  BTable:
    Type: AWS::DynamoDB::Table
  OneFunction:
    Type: AWS::Serverless::Function
    Properties:
      Policies:
        - AWSLambdaBasicExecutionRole
        - DynamoDBReadPolicy:
            TableName: !Ref BTable
        - Statement:
            - Effect: Allow
              Action:
                - dynamodb:GetItem
                - s3:GetObject
              Resource:
                - !GetAtt ATable.Arn
                - !Sub "${ATable.Arn}/index/gsi1"
            - Effect: Allow
              Action: dynamodb:Query
              Resource:
                - !Sub "${BTable.Arn}/index/*"
                - !Sub "arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/${ATable}"
                - !GetAtt ATable.StreamArn
            - Effect: Allow
              Action: sqs:SendMessage
              Resource: !GetAtt Queue.Arn
  TwoFunction:
    Type: AWS::Serverless::Function
    Properties:
      Policies:
        - AmazonDynamoDBFullAccess
        - DynamoDBStreamReadPolicy:
            TableName: !Ref ATable
            StreamName: x
        - Statement:
            - Effect: Deny
              Action: dynamodb:DeleteItem
              Resource: "*"
            - Effect: Allow
              Action: dynamodb:*
              Resource: !Sub "${ATable.Arn}${Suffix}"
            - Effect: Allow
              Action: "dynamodb:Get*"
              Resource: "*"
`

func TestDynamoDBGrants(t *testing.T) {
	tpl, err := sam.Parse([]byte(policyTemplate))
	if err != nil {
		t.Fatal(err)
	}
	one, _ := tpl.Function("one")
	grants, unread := tpl.DynamoDBGrants(one)
	if len(unread) != 0 {
		t.Errorf("unread = %q", unread)
	}
	read := func(a string) []sam.TableGrant {
		return []sam.TableGrant{{Action: "dynamodb:" + a, Table: "BTable"}, {Action: "dynamodb:" + a, Table: "BTable", Suffix: "/index/*"}}
	}
	var want []sam.TableGrant
	for _, a := range []string{"GetItem", "Scan", "Query", "BatchGetItem", "DescribeTable"} {
		want = append(want, read(a)...)
	}
	want = append(want,
		sam.TableGrant{Action: "dynamodb:GetItem", Table: "ATable"},
		sam.TableGrant{Action: "dynamodb:GetItem", Table: "ATable", Suffix: "/index/gsi1"},
		sam.TableGrant{Action: "dynamodb:Query", Table: "BTable", Suffix: "/index/*"},
		sam.TableGrant{Action: "dynamodb:Query", Table: "ATable"},
	)
	if !reflect.DeepEqual(grants, want) {
		t.Errorf("grants:\n got %v\nwant %v", grants, want)
	}

	two, _ := tpl.Function("two")
	grants, unread = tpl.DynamoDBGrants(two)
	if len(unread) != 4 {
		// The managed policy, the policy template, the Deny and the Sub
		// with a parameter.
		t.Errorf("unread = %q, want 4", unread)
	}
	if want := []sam.TableGrant{{Action: "dynamodb:Get*", Table: "*", Suffix: "*"}}; !reflect.DeepEqual(grants, want) {
		t.Errorf("grants = %v, want %v", grants, want)
	}
}

func TestTableGrantAllows(t *testing.T) {
	tests := []struct {
		name                 string
		grant                sam.TableGrant
		action, table, index string
		want                 bool
	}{
		{"Table", sam.TableGrant{Action: "dynamodb:GetItem", Table: "A"}, "dynamodb:GetItem", "A", "", true},
		{"OtherAction", sam.TableGrant{Action: "dynamodb:GetItem", Table: "A"}, "dynamodb:PutItem", "A", "", false},
		{"OtherTable", sam.TableGrant{Action: "dynamodb:GetItem", Table: "A"}, "dynamodb:GetItem", "B", "", false},
		{"TableIsNotItsIndexes", sam.TableGrant{Action: "dynamodb:Query", Table: "A"}, "dynamodb:Query", "A", "gsi1", false},
		{"IndexesAreNotTheTable", sam.TableGrant{Action: "dynamodb:Query", Table: "A", Suffix: "/index/*"}, "dynamodb:Query", "A", "", false},
		{"AnyIndex", sam.TableGrant{Action: "dynamodb:Query", Table: "A", Suffix: "/index/*"}, "dynamodb:Query", "A", "gsi2", true},
		{"NamedIndex", sam.TableGrant{Action: "dynamodb:Query", Table: "A", Suffix: "/index/gsi1"}, "dynamodb:Query", "A", "gsi1", true},
		{"OtherIndex", sam.TableGrant{Action: "dynamodb:Query", Table: "A", Suffix: "/index/gsi1"}, "dynamodb:Query", "A", "gsi2", false},
		{"ActionWildcard", sam.TableGrant{Action: "dynamodb:Batch*", Table: "A"}, "dynamodb:BatchWriteItem", "A", "", true},
		{"ActionCase", sam.TableGrant{Action: "DynamoDB:getitem", Table: "A"}, "dynamodb:GetItem", "A", "", true},
		{"Everything", sam.TableGrant{Action: "*", Table: "*", Suffix: "*"}, "dynamodb:Query", "B", "gsi1", true},
		{"TableAndIndexes", sam.TableGrant{Action: "dynamodb:Query", Table: "A", Suffix: "*"}, "dynamodb:Query", "A", "gsi1", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.grant.Allows(tc.action, tc.table, tc.index); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestPoliciesRead: every function's DynamoDB permissions are in a form
// DynamoDBGrants reads (the access check of shared/contract/access relies on it).
func TestPoliciesRead(t *testing.T) {
	tpl := loadTemplate(t)
	for _, fn := range tpl.Functions {
		_, unread := tpl.DynamoDBGrants(fn)
		for _, u := range unread {
			t.Errorf("function %s: cannot read its policy's %s", fn.Name, u)
		}
	}
}
