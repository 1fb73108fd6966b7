package kineto

import (
	"errors"
	"fmt"
	"io"
)

// scanner reads JSON text from a reader through one window buffer,
// checking its syntax as it goes and handing out the spans (stream
// offsets) of the values the parser asks for. It keeps in memory only the
// window: the bytes from mark (when set) or from the next unread byte,
// so memory is bounded by the largest value the parser marks (one trace
// event), not by the size of the text.
type scanner struct {
	r    io.Reader
	buf  []byte
	pos  int   // the next unread byte, an index into buf
	base int64 // the stream offset of buf[0]
	// mark, when not negative, is a stream offset from which bytes stay
	// in buf (so the spans of one event stay readable).
	mark  int64
	eof   bool
	rerr  error
	stack []byte // open containers while skipping a value
}

// maxDepth is how deeply arrays and objects may nest (encoding/json's
// limit too).
const maxDepth = 10000

// scanError is a syntax error or an early end, at a stream offset.
type scanError struct {
	off int64
	err error // io.ErrUnexpectedEOF, a read error, or a syntax message
}

func (e *scanError) Error() string { return e.err.Error() }
func (e *scanError) Unwrap() error { return e.err }

func newScanner(r io.Reader, size int) *scanner {
	return &scanner{r: r, buf: make([]byte, 0, size), mark: -1}
}

// off is the stream offset of the next unread byte.
func (s *scanner) off() int64 { return s.base + int64(s.pos) }

// span returns the bytes between two stream offsets, which must be at
// or after mark. The slice holds until the scanner reads on: a refill
// moves the window's bytes, so take it again after reading.
func (s *scanner) span(from, to int64) []byte { return s.buf[from-s.base : to-s.base] }

// fill reads more text into the window, keeping the bytes from mark (or
// from pos); it returns false at the end of the text or on a read error.
func (s *scanner) fill() bool {
	if s.eof {
		return false
	}
	keep := s.pos
	if s.mark >= 0 {
		keep = int(s.mark - s.base)
	}
	if keep > 0 {
		n := copy(s.buf, s.buf[keep:])
		s.buf = s.buf[:n]
		s.base += int64(keep)
		s.pos -= keep
	}
	if len(s.buf) > cap(s.buf)/2 {
		nb := make([]byte, len(s.buf), 2*cap(s.buf))
		copy(nb, s.buf)
		s.buf = nb
	}
	for {
		n, err := s.r.Read(s.buf[len(s.buf):cap(s.buf)])
		s.buf = s.buf[:len(s.buf)+n]
		if err != nil {
			s.eof = true
			if !errors.Is(err, io.EOF) {
				s.rerr = err
			}
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
}

// endErr is the error for text that ends (or cannot be read) early.
func (s *scanner) endErr() error {
	if s.rerr != nil {
		return &scanError{s.off(), s.rerr}
	}
	return &scanError{s.off(), io.ErrUnexpectedEOF}
}

func (s *scanner) synErr(off int64, format string, a ...any) error {
	return &scanError{off, fmt.Errorf(format, a...)}
}

// ws skips white space and returns the next byte without reading it;
// ok is false at the end of the text.
func (s *scanner) ws() (c byte, ok bool) {
	for {
		for s.pos < len(s.buf) {
			c = s.buf[s.pos]
			if c != ' ' && c != '\n' && c != '\r' && c != '\t' {
				return c, true
			}
			s.pos++
		}
		if !s.fill() {
			return 0, false
		}
	}
}

// expect reads white space and then byte want.
func (s *scanner) expect(want byte, after string) error {
	c, ok := s.ws()
	if !ok {
		return s.endErr()
	}
	if c != want {
		return s.synErr(s.off(), "invalid character %s %s", quoteChar(c), after)
	}
	s.pos++
	return nil
}

// str reads a string whose opening quote is the next byte and returns the
// span of its content (without the quotes); plain is false when it holds
// an escape or a non-ASCII byte (decode it with encoding/json then).
func (s *scanner) str() (from, to int64, plain bool, err error) {
	s.pos++
	from = s.off()
	plain = true
	for {
		b, i := s.buf, s.pos
	scan:
		for i < len(b) {
			c := b[i]
			switch {
			case c == '"':
				s.pos = i + 1
				return from, s.base + int64(i), plain, nil
			case c == '\\':
				plain = false
				if i+1 >= len(b) {
					break scan
				}
				switch b[i+1] {
				case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
					i += 2
				case 'u':
					if i+6 > len(b) {
						break scan
					}
					for j := i + 2; j < i+6; j++ {
						if !isHex(b[j]) {
							return 0, 0, false, s.synErr(s.base+int64(j), "invalid character %s in \\u hexadecimal character escape", quoteChar(b[j]))
						}
					}
					i += 6
				default:
					return 0, 0, false, s.synErr(s.base+int64(i+1), "invalid character %s in string escape code", quoteChar(b[i+1]))
				}
			case c < 0x20:
				return 0, 0, false, s.synErr(s.base+int64(i), "invalid character %s in string literal", quoteChar(c))
			default:
				if c >= 0x80 {
					plain = false
				}
				i++
			}
		}
		s.pos = i
		if !s.fill() {
			return 0, 0, false, s.endErr()
		}
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// peekByte returns the next byte, reading more text if needed.
func (s *scanner) peekByte() (byte, bool) {
	if s.pos < len(s.buf) || s.fill() {
		return s.buf[s.pos], true
	}
	return 0, false
}

// number reads a number whose first byte is next, checking JSON's
// grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() error {
	c, _ := s.peekByte()
	if c == '-' {
		s.pos++
		var ok bool
		if c, ok = s.peekByte(); !ok {
			return s.endErr()
		}
	}
	switch {
	case c == '0':
		s.pos++
	case '1' <= c && c <= '9':
		s.digits()
	default:
		return s.synErr(s.off(), "invalid character %s in numeric literal", quoteChar(c))
	}
	c, ok := s.peekByte()
	if ok && c == '.' {
		s.pos++
		if c, ok = s.peekByte(); !ok {
			return s.endErr()
		}
		if !isDigit(c) {
			return s.synErr(s.off(), "invalid character %s after decimal point in numeric literal", quoteChar(c))
		}
		s.digits()
		c, ok = s.peekByte()
	}
	if ok && (c == 'e' || c == 'E') {
		s.pos++
		if c, ok = s.peekByte(); !ok {
			return s.endErr()
		}
		if c == '+' || c == '-' {
			s.pos++
			if c, ok = s.peekByte(); !ok {
				return s.endErr()
			}
		}
		if !isDigit(c) {
			return s.synErr(s.off(), "invalid character %s in exponent of numeric literal", quoteChar(c))
		}
		s.digits()
	}
	return nil
}

func (s *scanner) digits() {
	for {
		for s.pos < len(s.buf) {
			if !isDigit(s.buf[s.pos]) {
				return
			}
			s.pos++
		}
		if !s.fill() {
			return
		}
	}
}

// literal reads true, false or null, whose first byte is next.
func (s *scanner) literal(word string) error {
	for i := 0; i < len(word); i++ {
		c, ok := s.peekByte()
		if !ok {
			return s.endErr()
		}
		if c != word[i] {
			return s.synErr(s.off(), "invalid character %s in literal %s (expecting %s)", quoteChar(c), word, quoteChar(word[i]))
		}
		s.pos++
	}
	return nil
}

// scalar reads a string, number or literal whose first byte c is next.
func (s *scanner) scalar(c byte) error {
	switch c {
	case '"':
		_, _, _, err := s.str()
		return err
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	}
	if c == '-' || isDigit(c) {
		return s.number()
	}
	return s.synErr(s.off(), "invalid character %s looking for beginning of value", quoteChar(c))
}

// value reads one value of any kind, checking its syntax, and returns
// its span and its first byte.
func (s *scanner) value() (first byte, from, to int64, err error) {
	c, ok := s.ws()
	if !ok {
		return 0, 0, 0, s.endErr()
	}
	first, from = c, s.off()
	if c != '{' && c != '[' {
		err = s.scalar(c)
		return first, from, s.off(), err
	}
	s.stack = s.stack[:0]
	for {
		// c, the next byte, begins a value.
		if c == '{' || c == '[' {
			if len(s.stack) >= maxDepth {
				return 0, 0, 0, s.synErr(s.off(), "exceeded max depth")
			}
			s.stack = append(s.stack, c)
			s.pos++
			if c, ok = s.ws(); !ok {
				return 0, 0, 0, s.endErr()
			}
			if c == '}' && s.stack[len(s.stack)-1] == '{' || c == ']' && s.stack[len(s.stack)-1] == '[' {
				s.pos++
				s.stack = s.stack[:len(s.stack)-1]
			} else if s.stack[len(s.stack)-1] == '{' {
				if err := s.key(c); err != nil {
					return 0, 0, 0, err
				}
				if c, ok = s.ws(); !ok {
					return 0, 0, 0, s.endErr()
				}
				continue
			} else {
				continue
			}
		} else if err := s.scalar(c); err != nil {
			return 0, 0, 0, err
		}
		// After a value: close containers or go on to the next element.
		for {
			if len(s.stack) == 0 {
				return first, from, s.off(), nil
			}
			if c, ok = s.ws(); !ok {
				return 0, 0, 0, s.endErr()
			}
			top := s.stack[len(s.stack)-1]
			if c == ',' {
				s.pos++
				if top == '{' {
					if c, ok = s.ws(); !ok {
						return 0, 0, 0, s.endErr()
					}
					if err := s.key(c); err != nil {
						return 0, 0, 0, err
					}
				}
				if c, ok = s.ws(); !ok {
					return 0, 0, 0, s.endErr()
				}
				break
			}
			if c == '}' && top == '{' || c == ']' && top == '[' {
				s.pos++
				s.stack = s.stack[:len(s.stack)-1]
				continue
			}
			if top == '{' {
				return 0, 0, 0, s.synErr(s.off(), "invalid character %s after object key:value pair", quoteChar(c))
			}
			return 0, 0, 0, s.synErr(s.off(), "invalid character %s after array element", quoteChar(c))
		}
	}
}

// key reads an object's key (its first byte c is next) and the colon.
func (s *scanner) key(c byte) error {
	if c != '"' {
		return s.synErr(s.off(), "invalid character %s looking for beginning of object key string", quoteChar(c))
	}
	if _, _, _, err := s.str(); err != nil {
		return err
	}
	return s.expect(':', "after object key")
}

func quoteChar(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if c == '"' {
		return `'"'`
	}
	q := fmt.Sprintf("%q", string(rune(c)))
	return "'" + q[1:len(q)-1] + "'"
}
