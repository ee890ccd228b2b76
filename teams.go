package cohort

import (
	"context"
	"path/filepath"

	"github.com/cohort-dev/cohort/team"
	"github.com/cohort-dev/cohort/teammate"
)

// TeamState is one team under $COHORT_HOME/teams as `cohort teams` lists
// it: who leads it (a running session, or nobody: orphaned), its members
// and whether their processes still run.
type TeamState = teammate.TeamState

// Teams lists every team under the home cfg resolves to, sorted by name; a
// team whose file cannot be read is listed with its Problem, never skipped.
func Teams(ctx context.Context, cfg Config) ([]TeamState, error) {
	store, err := teamStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return teammate.Teams(store)
}

// RemoveTeam removes an orphaned team (one no running session leads); with
// force, also while some of its teammates still run.
func RemoveTeam(ctx context.Context, cfg Config, name string, force bool) error {
	store, err := teamStore(ctx, cfg)
	if err != nil {
		return err
	}
	return teammate.RemoveTeam(ctx, store, name, force)
}

// PruneTeams removes every orphaned team whose teammates have all stopped
// and returns their names.
func PruneTeams(ctx context.Context, cfg Config) ([]string, error) {
	store, err := teamStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return teammate.Prune(ctx, store)
}

func teamStore(ctx context.Context, cfg Config) (*team.Store, error) {
	b, err := loadBase(ctx, cfg.invocation(), cfg.options())
	if err != nil {
		return nil, err
	}
	return team.NewStore(team.StoreConfig{Root: filepath.Join(b.env.CohortHome, "teams")})
}
