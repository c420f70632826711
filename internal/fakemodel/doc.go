// Package fakemodel provides scripted fake model servers on the loopback
// interface, so that real agent harnesses (Claude Code, Codex) can be run
// end to end in tests without a network or a model.
//
// A server speaks one wire dialect: [NewAnthropic] answers the Anthropic
// Messages API (POST /v1/messages) and [NewOpenAI] answers the OpenAI
// Responses API (POST /v1/responses), both with server-sent events as the
// harnesses expect. What the server answers is given by a [Script]: a list of
// steps, each either a shell command for the harness to run ([Run]) or a final
// text answer ([Say]).
//
// The server is stateless about turns on purpose. It picks the step from the
// request itself: the number of tool results already present in the
// conversation is the index of the step to answer. A harness that retries,
// forks a side request, or is sent back to work by a Stop hook therefore gets
// a consistent answer, and once the script is exhausted the server answers
// with final text, so a harness cannot loop forever on a fake tool call.
//
// Every request is recorded, raw and decoded, so that a test can assert what
// the harness sent to the model (for example that hook output reached the
// model): see [Server.Requests] and [Server.Contains].
package fakemodel
