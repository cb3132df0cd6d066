// Command echo is a tiny Lambda function that the runtime harness tests
// build and invoke. It echoes its event and invocation metadata back, and
// the event can ask it to misbehave:
//
//	{"fail": "message"}  return an error with that message
//	{"panic": "message"} panic
//	{"exit": 3}          exit the process while handling the event
//	{"hang": true}       block forever, ignoring the context's deadline
//
// With ECHO_INIT=exit it exits before starting the runtime loop, and with
// ECHO_INIT=post it reports an init error through the Runtime API first.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"log"
	"net/http"
	"os"
	"strings"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

// request holds the instructions an event may carry.
type request struct {
	Fail  string `json:"fail"`
	Panic string `json:"panic"`
	Exit  int    `json:"exit"`
	Hang  bool   `json:"hang"`
}

// response is what the function echoes back.
type response struct {
	Event       json.RawMessage   `json:"event"`
	RequestID   string            `json:"requestId"`
	FunctionARN string            `json:"functionArn"`
	HasDeadline bool              `json:"hasDeadline"`
	TraceID     string            `json:"traceId"`
	Env         map[string]string `json:"env"`
}

func handle(ctx context.Context, event json.RawMessage) (response, error) {
	var req request
	if err := json.Unmarshal(event, &req); err != nil {
		return response{}, err
	}
	switch {
	case req.Fail != "":
		return response{}, errors.New(req.Fail)
	case req.Panic != "":
		panic(req.Panic)
	case req.Exit != 0:
		os.Exit(req.Exit)
	case req.Hang:
		select {}
	}
	lc, _ := lambdacontext.FromContext(ctx)
	_, hasDeadline := ctx.Deadline()
	env := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "AWS_") || strings.HasPrefix(k, "ECHO_") || k == "_HANDLER" {
			env[k] = v
		}
	}
	return response{
		Event:       event,
		RequestID:   lc.AwsRequestID,
		FunctionARN: lc.InvokedFunctionArn,
		HasDeadline: hasDeadline,
		TraceID:     os.Getenv("_X_AMZN_TRACE_ID"),
		Env:         env,
	}, nil
}

func main() {
	switch os.Getenv("ECHO_INIT") {
	case "exit":
		log.Fatal("echo: init failed on purpose")
	case "post":
		url := "http://" + os.Getenv("AWS_LAMBDA_RUNTIME_API") + "/2018-06-01/runtime/init/error"
		body := strings.NewReader(`{"errorMessage":"init failed on purpose","errorType":"Echo.InitError"}`)
		resp, err := http.Post(url, "application/json", body)
		if err != nil {
			log.Fatalf("echo: post init error: %v", err)
		}
		resp.Body.Close()
		os.Exit(1)
	}
	lambda.Start(handle)
}
