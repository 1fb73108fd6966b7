// Package outfile writes the files a user names: sweep results (--out),
// exports (--pprof, --perfetto, --chrome), recordings (--record, the lab's
// record key) and scenarios saved from the lab. Every such write goes
// through it, so they all behave the same way:
//
//   - Check tests a path before any work starts: its folder exists and a
//     file can be created there (it creates and removes one), and whatever
//     is at the path now may be replaced.
//   - Only regular files are written. A folder, a device, a FIFO or a
//     socket is refused, with or without overwrite.
//   - An existing file is replaced only with Options.Overwrite.
//   - A symbolic link to a regular file is followed: its target is written
//     (replaced, with Overwrite) and the link stays as it is. A link to
//     anything else, or to nothing, is refused. A link is never replaced by
//     a regular file.
//   - WriteFile writes a temporary file beside the target, syncs it and
//     renames it into place, so a failed write leaves the target as it was.
//     Without Overwrite the last step never replaces a file that appeared
//     since the check.
//   - New files get mode 0666 less the umask, as any command's output does;
//     a replaced file keeps its mode.
//
// It imports no other c3lab package, so recordings, profiler/export, the
// lab and the command can all use it.
package outfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Errors a caller may tell apart with errors.Is.
var (
	// ErrExists: the path exists and Options.Overwrite is off.
	ErrExists = errors.New("already exists")
	// ErrNotRegular: the path (or the link's target) is a folder, a
	// device, a FIFO, a socket or a link to nothing.
	ErrNotRegular = errors.New("not a regular file")
)

// Options say what a write may do to what is at the path.
type Options struct {
	// Overwrite lets an existing regular file (or a link's regular target)
	// be replaced.
	Overwrite bool
}

// newFileMode is the mode new files are created with; the umask applies.
const newFileMode = 0o666

// target is the file a path names: the path itself, or the regular file a
// symbolic link at the path resolves to.
type target struct {
	path string
	// info describes the existing file; nil when there is none yet.
	info fs.FileInfo
}

// Check reports whether path can be written with opt now, before any work
// is done: the folder exists and takes a new file (Check creates one there
// and removes it), and what is at path, if anything, may be replaced. The
// error is one line saying what is wrong; errors.Is tells ErrExists and
// ErrNotRegular apart.
func Check(path string, opt Options) error {
	t, err := resolve(path, opt)
	if err != nil {
		return err
	}
	if err := checkFolder(t.path); err != nil {
		return err
	}
	f, err := createTemp(filepath.Dir(t.path), filepath.Base(t.path))
	if err != nil {
		return folderError(t.path, err)
	}
	name := f.Name()
	f.Close()
	os.Remove(name)
	return nil
}

// WriteFile writes what write produces to path: into a temporary file
// beside the target, synced to disk and renamed into place. On any error
// the temporary file is removed and the target is as it was.
func WriteFile(path string, opt Options, write func(io.Writer) error) error {
	t, err := resolve(path, opt)
	if err != nil {
		return err
	}
	if err := checkFolder(t.path); err != nil {
		return err
	}
	dir := filepath.Dir(t.path)
	tmp, err := createTemp(dir, filepath.Base(t.path))
	if err != nil {
		return folderError(t.path, err)
	}
	name := tmp.Name()
	published := false
	defer func() {
		if !published {
			os.Remove(name)
		}
	}()
	var merr error
	if t.info != nil {
		merr = tmp.Chmod(t.info.Mode().Perm())
	}
	bw := bufio.NewWriter(tmp)
	werr := write(bw)
	if werr == nil {
		werr = bw.Flush()
	}
	serr := tmp.Sync()
	cerr := tmp.Close()
	for _, err := range []error{werr, merr, serr, cerr} {
		if err != nil {
			// The first failure says what went wrong; the rest follow from it.
			return fmt.Errorf("writing %s: %w", path, reason(err))
		}
	}
	if err := publish(name, t, path, opt); err != nil {
		return err
	}
	published = true
	syncFolder(dir)
	return nil
}

// Create opens path for a file written as it grows (a recording): a new
// file, created with O_EXCL, or with opt.Overwrite the existing regular
// file, emptied. The same rules as WriteFile apply to what is at path.
func Create(path string, opt Options) (*os.File, error) {
	t, err := resolve(path, opt)
	if err != nil {
		return nil, err
	}
	if err := checkFolder(t.path); err != nil {
		return nil, err
	}
	if t.info == nil {
		f, err := os.OpenFile(t.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, newFileMode)
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%s %w", path, ErrExists)
		}
		if err != nil {
			return nil, folderError(t.path, err)
		}
		return f, nil
	}
	// O_NOFOLLOW and O_NONBLOCK: should something other than the file
	// checked have taken its place (a link, a FIFO), opening fails or
	// returns at once instead of blocking, and the check below refuses it.
	f, err := os.OpenFile(t.path, os.O_WRONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("cannot write %s: %w", path, reason(err))
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || !os.SameFile(fi, t.info) {
		f.Close()
		return nil, fmt.Errorf("cannot write %s: it changed while being opened (it is no longer the regular file checked); try again", path)
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, fmt.Errorf("cannot write %s: %w", path, reason(err))
	}
	return f, nil
}

// Rescue writes what write produces to a new file named name in the first
// of dirs that takes it, and returns its path. A name that is taken gets
// -2, -3 … before its extension; nothing is overwritten. It is the last
// resort when the file a user named could not be written, so that results
// are not lost.
func Rescue(dirs []string, name string, write func(io.Writer) error) (string, error) {
	var msgs []string
	for _, dir := range dirs {
		p := filepath.Join(dir, name)
		for range 100 {
			p = Unused(p)
			err := WriteFile(p, Options{}, write)
			if err == nil {
				return p, nil
			}
			if !errors.Is(err, ErrExists) {
				msgs = append(msgs, err.Error())
				break
			}
		}
	}
	return "", errors.New(strings.Join(msgs, "; "))
}

// Unused returns path, or, when something is there, the first of
// path-2.ext, path-3.ext … that is free now.
func Unused(path string) string {
	ext := filepath.Ext(path)
	stem := strings.TrimSuffix(path, ext)
	p := path
	for i := 2; ; i++ {
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			return p
		}
		p = stem + "-" + strconv.Itoa(i) + ext
	}
}

// resolve finds the file path names and checks that it may be written
// with opt: nothing there, or a regular file (directly or through a link)
// and opt.Overwrite.
func resolve(path string, opt Options) (target, error) {
	if path == "" {
		return target{}, errors.New("no file name given")
	}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		// Nothing there; checkFolder says what is wrong with the folder.
		return target{path: path}, nil
	case err != nil:
		return target{}, fmt.Errorf("cannot check %s: %w", path, reason(err))
	}
	t := target{path: path, info: fi}
	if fi.Mode()&fs.ModeSymlink != 0 {
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return target{}, fmt.Errorf("%s is a symbolic link to nothing that exists, %w; give the path of a file instead", path, ErrNotRegular)
		}
		if t.info, err = os.Stat(real); err != nil {
			return target{}, fmt.Errorf("cannot check %s (a link to %s): %w", path, real, reason(err))
		}
		t.path = real
		if !t.info.Mode().IsRegular() {
			return target{}, fmt.Errorf("%s is a link to %s, which is %s, %w; c3lab writes only regular files (pick another path)", path, real, kind(t.info.Mode()), ErrNotRegular)
		}
	}
	if m := t.info.Mode(); m.IsDir() {
		return target{}, fmt.Errorf("%s is a folder, %w; give a file name (for example %s)", path, ErrNotRegular, filepath.Join(path, "out.json"))
	} else if !m.IsRegular() {
		return target{}, fmt.Errorf("%s is %s, %w; c3lab writes only regular files (pick another path)", path, kind(m), ErrNotRegular)
	}
	if !opt.Overwrite {
		return target{}, fmt.Errorf("%s %w", path, ErrExists)
	}
	return t, nil
}

// kind names a file type that is not a regular file.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "a special file"
}

// checkFolder checks that the folder file goes in exists and is a folder.
func checkFolder(file string) error {
	dir := filepath.Dir(file)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("cannot write %s: the folder %s does not exist (create it or pick another path)", file, dir)
	case errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("cannot write %s: %s is not a folder (part of it is a file)", file, dir)
	case err != nil:
		return fmt.Errorf("cannot write %s: %w", file, reason(err))
	case !fi.IsDir():
		return fmt.Errorf("cannot write %s: %s is not a folder", file, dir)
	}
	return nil
}

// folderError says why no file could be created in file's folder.
func folderError(file string, err error) error {
	return fmt.Errorf("cannot write %s: cannot create a file in %s (%w); pick a folder you can write to", file, filepath.Dir(file), reason(err))
}

// createTemp creates a new file beside a file named base in dir, with the
// umask-respecting mode (os.CreateTemp would make it 0600).
func createTemp(dir, base string) (*os.File, error) {
	if len(base) > 64 {
		base = base[:64]
	}
	var err error
	for range 100 {
		name := filepath.Join(dir, "."+base+"."+strconv.FormatUint(rand.Uint64(), 36)+".tmp")
		var f *os.File
		f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, newFileMode)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, err
}

// publish moves the written temporary file tmp to t.path. Without
// overwrite it links tmp there, which fails if a file has appeared since
// the check, and falls back to a rename only where the file system has no
// hard links. With overwrite it checks again that a regular file (or
// nothing) is there before renaming over it.
func publish(tmp string, t target, path string, opt Options) error {
	if !opt.Overwrite || t.info == nil {
		err := os.Link(tmp, t.path)
		if err == nil {
			os.Remove(tmp)
			return nil
		}
		if errors.Is(err, fs.ErrExist) && !opt.Overwrite {
			return fmt.Errorf("%s %w (it appeared while the results were being written)", path, ErrExists)
		}
	}
	if fi, err := os.Lstat(t.path); err == nil {
		if !opt.Overwrite {
			return fmt.Errorf("%s %w (it appeared while the results were being written)", path, ErrExists)
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s is now %s, %w; it was not replaced", path, kind(fi.Mode()), ErrNotRegular)
		}
	}
	if err := os.Rename(tmp, t.path); err != nil {
		return fmt.Errorf("writing %s: %w", path, reason(err))
	}
	return nil
}

// syncFolder makes a rename in dir durable where the file system allows.
func syncFolder(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// reason strips the path from an *fs.PathError or *os.LinkError, whose
// message the caller's own already names.
func reason(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
