package action

import (
	"context"
	"log/slog"
)

// Reactions run, before a request answers, the reactions that follow the
// actions it recorded (the rules: shared/domain/rule's Engine), so that
// the answer shows what they did. The rules function, reading the Actions
// table's stream, applies whatever they leave out, so they are an early
// run of the stream's reactions rather than a second mechanism. It is the
// one interface the domains that record actions (awards, segments, POS)
// take for them.
type Reactions interface {
	// Run runs the reactions to the actions, in order, and returns how
	// many changes they made or found made on them (0: the actions are
	// as the request wrote them), with the failures joined.
	Run(ctx context.Context, actions ...Action) (int, error)
}

// OnRecorded registers r to run on the actions the services recording
// through this recorder report once their change committed (React). A
// function's wiring registers its rules engine here; a function that
// registers nothing (the jobs function) leaves every reaction to the
// stream consumer.
func (rec *Recorder) OnRecorded(r Reactions) { rec.reactions = append(rec.reactions, r) }

// React runs the registered reactions on actions just recorded and
// returns the sum of what their Run returned (the changes made or found
// made on them). A failure is logged on log (what names the change) and
// otherwise ignored: the stream consumer applies what is left. A nil
// recorder, or one with no reactions, runs nothing.
func (rec *Recorder) React(ctx context.Context, log *slog.Logger, what string, actions ...Action) int {
	if rec == nil || len(actions) == 0 {
		return 0
	}
	n := 0
	for _, r := range rec.reactions {
		got, err := r.Run(ctx, actions...)
		n += got
		if err != nil {
			ids := make([]string, 0, len(actions))
			for _, a := range actions {
				ids = append(ids, a.ID)
			}
			log.WarnContext(ctx, "rules after "+what+" failed; the stream consumer will apply them", "actionIds", ids, "error", err.Error())
		}
	}
	return n
}
