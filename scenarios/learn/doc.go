// Package learn holds c3lab's guided lessons: lesson files (YAML, the
// built-in ones embedded, a teacher's own loaded from disk), their
// validation with line-numbered problems, the figures a lesson asks the
// learner to predict, the committed H200 runs a lesson shows beside the
// learner's, and the learner's progress kept under the XDG state
// directory.
//
// A lesson is one scenario, one question answered by predicting a number,
// one knob to flip (from one strategy to another), and the text that
// explains the answer. The TUI (package tui) runs it; this package knows
// nothing of the screen.
package learn
