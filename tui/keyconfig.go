package tui

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	"github.com/goccy/go-yaml"
)

// KeyConfigPath is the file the lab reads key bindings from:
// c3lab/keys.yaml in the user's config directory ($XDG_CONFIG_HOME or
// ~/.config on Linux).
func KeyConfigPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "c3lab", "keys.yaml"), nil
}

// bindingsByAction names every rebindable binding of a key map.
func (k *KeyMap) bindingsByAction() map[string]*key.Binding {
	return map[string]*key.Binding{
		"up": &k.Up, "down": &k.Down, "pick": &k.Pick, "next_panel": &k.NextPanel,
		"launch": &k.Launch, "priority": &k.Priority, "sms_down": &k.SMsDown, "sms_up": &k.SMsUp,
		"ctas": &k.CTAs, "dma": &k.DMA, "copy_engines": &k.CEs, "decompose": &k.Decompose,
		"gpu": &k.GPU, "zoom_in": &k.ZoomIn, "zoom_out": &k.ZoomOut, "zoom_reset": &k.ZoomReset,
		"pan_left": &k.PanLeft, "pan_right": &k.PanRight,
		"advice": &k.Advice, "live": &k.Live, "sweep": &k.Sweep, "compose": &k.Compose, "rerun": &k.Rerun,
		"record": &k.Record, "help": &k.Help, "close": &k.Close, "quit": &k.Quit,
	}
}

// KeyActions lists the action names a key file may bind, sorted.
func KeyActions() []string {
	var k KeyMap
	var out []string
	for a := range k.bindingsByAction() {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// LoadKeyMap applies a key file to base. The file maps actions to a key or
// a list of keys, in bubbletea's key names:
//
//	launch: x
//	quit: [q, ctrl+q]
//
// Unknown actions, empty keys and a key bound to two actions are errors
// that name the file and the action.
func LoadKeyMap(data []byte, file string, base KeyMap) (KeyMap, error) {
	var raw yaml.MapSlice
	if err := yaml.UnmarshalWithOptions(data, &raw, yaml.UseOrderedMap()); err != nil {
		return base, fmt.Errorf("%s: %s", file, strings.ReplaceAll(yaml.FormatError(err, false, false), "\n", " "))
	}
	k := base
	bindings := k.bindingsByAction()
	owner := map[string]string{}
	for _, item := range raw {
		action := fmt.Sprint(item.Key)
		b, ok := bindings[action]
		if !ok {
			return base, fmt.Errorf("%s: unknown action %q; allowed %s", file, action, strings.Join(KeyActions(), ", "))
		}
		var keys []string
		switch v := item.Value.(type) {
		case string:
			keys = []string{v}
		case []any:
			for _, x := range v {
				keys = append(keys, fmt.Sprint(x))
			}
		default:
			return base, fmt.Errorf("%s: %s: want a key or a list of keys, such as x or [x, ctrl+x]", file, action)
		}
		if len(keys) == 0 || slices.Contains(keys, "") {
			return base, fmt.Errorf("%s: %s: empty key", file, action)
		}
		for _, kk := range keys {
			if other, dup := owner[kk]; dup && other != action {
				return base, fmt.Errorf("%s: key %q is bound to both %s and %s", file, kk, other, action)
			}
			owner[kk] = action
		}
		b.SetKeys(keys...)
		b.SetHelp(strings.Join(keys, "/"), b.Help().Desc)
	}
	// A default key left on another action would now do two things.
	for action, b := range bindings {
		for _, kk := range b.Keys() {
			if other, ok := owner[kk]; ok && other != action {
				return base, fmt.Errorf("%s: key %q is bound to %s but is still %s's default; rebind %s too", file, kk, other, action, action)
			}
		}
	}
	return k, nil
}

// LoadUserKeyMap reads the user's key file when there is one; no file
// means the defaults.
func LoadUserKeyMap() (KeyMap, error) {
	path, err := KeyConfigPath()
	if err != nil {
		return DefaultKeyMap(), nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return DefaultKeyMap(), nil
	}
	if err != nil {
		return DefaultKeyMap(), fmt.Errorf("reading %s: %w", path, err)
	}
	return LoadKeyMap(data, path, DefaultKeyMap())
}
