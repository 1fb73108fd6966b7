package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
)

// drainTimeout bounds how long Run waits, after the program ends, for an
// in-flight measurement to notice its cancelled context.
const drainTimeout = 10 * time.Second

// Run runs the lab full-screen (alternate screen) until the user quits or
// ctx is cancelled. It returns once no measurement is running any more, so
// the caller may close the backend, and once every recording the lab made
// is flushed and closed (a recorder's failure is its Err, not Run's).
func Run(ctx context.Context, cfg Config) error {
	if cfg.Backend == nil {
		return errors.New("tui: no backend")
	}
	if len(cfg.Suite) == 0 {
		return errors.New("tui: no scenarios")
	}
	if cfg.Start != "" {
		names := make([]string, 0, len(cfg.Suite))
		found := false
		for _, sc := range cfg.Suite {
			names = append(names, sc.Name)
			found = found || sc.Name == cfg.Start
		}
		if !found {
			return fmt.Errorf("tui: no scenario %q; have %s", cfg.Start, strings.Join(names, ", "))
		}
	}
	m := newModel(ctx, cfg)
	if err := m.rec.startErr; err != nil {
		m.cancel()
		return err
	}
	p := tea.NewProgram(m, tea.WithContext(ctx))
	if cfg.Telemetry != nil {
		go func() {
			for b := range cfg.Telemetry {
				p.Send(liveMsg{b})
			}
		}()
	}
	if cfg.Ranks != nil {
		done := make(chan struct{})
		defer close(done)
		go watchRanks(cfg.Ranks, p, done)
	}
	final, err := p.Run()
	m.adv.end()
	if fm, ok := final.(Model); ok && fm.cancel != nil {
		fm.cancel()
	} else if m.cancel != nil {
		m.cancel()
	}
	drained := m.gate.closeAndWait(drainTimeout)
	m.rec.all.closeAll()
	if !drained {
		return errors.Join(err, errors.New("tui: a measurement did not stop within "+drainTimeout.String()))
	}
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
