package htmlreport

import (
	"bufio"
	_ "embed"
	"fmt"
	"html/template"
	"io"
)

//go:embed report.html.tmpl
var pageTemplate string

//go:embed report.js
var pageScript string

// parse builds the page's template: the HTML with its SVG, and the
// script, parsed as the script element's JavaScript.
func parse() (*template.Template, error) {
	return template.New("report").Funcs(template.FuncMap{
		"add": func(a, b int) int { return a + b },
	}).Parse(pageTemplate + `{{define "script"}}` + pageScript + `{{end}}`)
}

// Write renders the page as one self-contained HTML file: styles, charts
// and script inline, nothing fetched. Everything that came from an input
// file is escaped by html/template.
func Write(w io.Writer, p Page) error {
	t, err := parse()
	if err != nil {
		return fmt.Errorf("the report's template: %w", err)
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	if err := t.Execute(bw, p); err != nil {
		return fmt.Errorf("rendering the report: %w", err)
	}
	return bw.Flush()
}
