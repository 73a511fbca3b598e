// Package hostassets installs lifeloop's native hooks persistently into a
// harness's settings file, for sessions not launched through `lifeloop
// run`. The harness says which file (adapters.HostInstaller) and which
// hooks (hooks.Spec); the file has the command-hook schema
//
//	{"hooks":{"Event":[{"matcher":"*","hooks":[{"type":"command","command":"..."}]}]}}
//
// The merge is additive and reversible:
//
//   - Apply adds one group per hook event (with the spec's "matcher" when
//     it has one) running `<lifeloop> host-hook --adapter ID --hook
//     EVENT`, after the user's own groups. Every other
//     key, entry and their order are kept. A lifeloop entry whose command
//     differs (a moved binary) is updated in place. Applying twice changes
//     nothing: the file is not rewritten when the result is byte-identical.
//   - Lifeloop's entries are recognised by a command containing "lifeloop"
//     and hooks.CommandMarker(ID) followed by the event.
//   - Remove takes out exactly those entries, then the groups, event
//     arrays and the "hooks" object they leave empty. For a file in the
//     usual indented style (2 spaces, or any indent
//     unit: the first indented line's is kept) without empty hook
//     containers of its own, apply followed by remove gives back the
//     original bytes. A file in another style (minified, aligned) is
//     rewritten in that indented style.
//   - RemoveOwn, for a file that is lifeloop's own (a harness that runs
//     every file of a hooks folder), deletes the file and its backup
//     when nothing else was in it.
//   - Writes are atomic (statedir.WriteFileAtomic, mode 0600) and the
//     previous content is kept next to the file as
//     "<name>.lifeloop-backup" (the last one only; overwritten by the next
//     change). No backup is written when the file did not exist. An
//     existing file keeps its permissions; a new one is 0600.
//
// The package reads and writes only the path it is given.
package hostassets

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/lifeloop/lifeloop/hooks"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// BackupSuffix is appended to a settings file's name for the copy of its
// previous content.
const BackupSuffix = ".lifeloop-backup"

// Hook states reported by Inspect.
const (
	StatePresent = "present"
	StateMissing = "missing"
	StateDrifted = "drifted"
)

// Result is what Apply or Remove did.
type Result struct {
	Path    string `json:"path"`
	Changed bool   `json:"changed"`
	// Backup is the file holding the previous content, when one was
	// written.
	Backup string `json:"backup,omitempty"`
	// Deleted is true when RemoveOwn deleted the file.
	Deleted bool `json:"deleted,omitempty"`
}

// HookState is one hook event's installation state.
type HookState struct {
	Hook  string `json:"hook"`
	State string `json:"state"`
	// Command is the lifeloop command found for the hook ("" when
	// missing); Want is the command Apply would install.
	Command string `json:"command,omitempty"`
	Want    string `json:"want"`
}

// Report is Inspect's answer.
type Report struct {
	Adapter    string      `json:"adapter"`
	Path       string      `json:"path"`
	Exists     bool        `json:"exists"`
	Hooks      []HookState `json:"hooks"`
	AllPresent bool        `json:"all_present"`
	Notes      []string    `json:"notes,omitempty"`
}

func checkSpec(spec *hooks.Spec) error {
	if spec == nil || len(spec.Hooks) == 0 {
		return errors.New("this adapter has no native hooks lifeloop can install")
	}
	return nil
}

// load reads path; a missing file is an empty document.
func load(path string) (doc *object, orig []byte, exists bool, err error) {
	orig, err = os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return newObject(), nil, false, nil
	}
	if err != nil {
		return nil, nil, false, err
	}
	if strings.TrimSpace(string(orig)) == "" {
		return newObject(), orig, true, nil
	}
	doc, err = decodeDoc(orig)
	if err != nil {
		return nil, nil, true, fmt.Errorf("%s is not a JSON object (%w); fix or move it, then try again", path, err)
	}
	return doc, orig, true, nil
}

// hooksObject returns doc's "hooks" object (nil when absent).
func hooksObject(doc *object, path string) (*object, error) {
	v, ok := doc.get("hooks")
	if !ok {
		return nil, nil
	}
	h, ok := v.(*object)
	if !ok {
		return nil, fmt.Errorf("%s: \"hooks\" is not an object; fix it, then try again", path)
	}
	return h, nil
}

// isOurs reports whether command is lifeloop's hook command for adapterID
// (and for hook, when hook is not "").
func isOurs(command, adapterID, hook string) bool {
	if !strings.Contains(command, "lifeloop") {
		return false
	}
	marker := hooks.CommandMarker(adapterID)
	i := strings.Index(command, marker)
	if i < 0 {
		return false
	}
	if hook == "" {
		return true
	}
	rest := command[i+len(marker):]
	return rest == hook || strings.HasPrefix(rest, hook+" ") || rest == hooks.ShellQuote(hook) || strings.HasPrefix(rest, hooks.ShellQuote(hook)+" ")
}

// entries calls fn for every hook entry object of an event array.
func entries(arr []any, fn func(group *object, entry *object)) {
	for _, g := range arr {
		group, ok := g.(*object)
		if !ok {
			continue
		}
		hv, _ := group.get("hooks")
		list, _ := hv.([]any)
		for _, e := range list {
			if entry, ok := e.(*object); ok {
				fn(group, entry)
			}
		}
	}
}

func commandOf(entry *object) string {
	c, _ := entry.get("command")
	s, _ := c.(string)
	return s
}

// Apply installs the hooks of spec into path, running hookCommand (the
// lifeloop program, absolute) for each.
func Apply(path string, spec *hooks.Spec, hookCommand []string) (Result, error) {
	res := Result{Path: path}
	if err := checkSpec(spec); err != nil {
		return res, err
	}
	adapterID := spec.Adapter
	doc, orig, exists, err := load(path)
	if err != nil {
		return res, err
	}
	h, err := hooksObject(doc, path)
	if err != nil {
		return res, err
	}
	if h == nil {
		h = newObject()
		doc.set("hooks", h)
	}
	for _, ev := range spec.Names() {
		want := hooks.Command(hookCommand, adapterID, ev)
		v, ok := h.get(ev)
		arr, isArr := v.([]any)
		if ok && !isArr {
			return res, fmt.Errorf("%s: hooks.%s is not an array; fix it, then try again", path, ev)
		}
		found := false
		entries(arr, func(_ *object, entry *object) {
			if isOurs(commandOf(entry), adapterID, ev) {
				if !found {
					entry.set("command", want)
				}
				found = true
			}
		})
		if !found {
			group := newObject()
			if spec.Matcher != "" {
				group.set("matcher", spec.Matcher)
			}
			entry := newObject()
			entry.set("type", "command")
			entry.set("command", want)
			group.set("hooks", []any{entry})
			h.set(ev, append(arr, group))
		}
	}
	return write(path, doc, orig, exists, res)
}

// Remove takes lifeloop's hooks of spec's adapter out of path. A missing
// file is left missing.
func Remove(path string, spec *hooks.Spec) (Result, error) {
	res := Result{Path: path}
	doc, orig, exists, removed, err := strip(path, spec)
	if err != nil || !removed {
		return res, err
	}
	return write(path, doc, orig, exists, res)
}

// RemoveOwn is Remove for a file that is lifeloop's own (a harness that
// loads every file of a hooks folder): when nothing but lifeloop's hooks
// was in it, the file and its backup are deleted instead of rewritten; a
// file that holds anything else is handled as Remove does.
func RemoveOwn(path string, spec *hooks.Spec) (Result, error) {
	res := Result{Path: path}
	doc, orig, exists, removed, err := strip(path, spec)
	if err != nil || !exists {
		return res, err
	}
	if len(doc.keys) > 0 {
		if !removed {
			return res, nil
		}
		return write(path, doc, orig, exists, res)
	}
	for _, p := range []string{path, path + BackupSuffix} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return res, fmt.Errorf("deleting %s: %w", p, err)
		}
	}
	res.Changed, res.Deleted = true, true
	return res, nil
}

// strip loads path and takes lifeloop's hooks of spec's adapter out of
// the document, then the groups, event lists and "hooks" object left
// empty; removed says whether any was there.
func strip(path string, spec *hooks.Spec) (doc *object, orig []byte, exists, removed bool, err error) {
	if err := checkSpec(spec); err != nil {
		return nil, nil, false, false, err
	}
	adapterID := spec.Adapter
	doc, orig, exists, err = load(path)
	if err != nil || !exists {
		return doc, orig, exists, false, err
	}
	h, err := hooksObject(doc, path)
	if err != nil || h == nil {
		return doc, orig, exists, false, err
	}
	removedAny := false
	for _, ev := range append([]string{}, h.keys...) {
		arr, ok := h.vals[ev].([]any)
		if !ok {
			continue
		}
		var keep []any
		removedHere := false
		for _, g := range arr {
			group, ok := g.(*object)
			if !ok {
				keep = append(keep, g)
				continue
			}
			hv, _ := group.get("hooks")
			list, ok := hv.([]any)
			if !ok {
				keep = append(keep, g)
				continue
			}
			var kept []any
			for _, e := range list {
				if entry, ok := e.(*object); ok && isOurs(commandOf(entry), adapterID, "") {
					removedHere = true
					continue
				}
				kept = append(kept, e)
			}
			if len(kept) == len(list) {
				keep = append(keep, g)
				continue
			}
			if len(kept) > 0 {
				group.set("hooks", kept)
				keep = append(keep, group)
			}
		}
		if !removedHere {
			continue
		}
		removedAny = true
		if len(keep) == 0 {
			h.del(ev)
		} else {
			h.set(ev, keep)
		}
	}
	if removedAny && len(h.keys) == 0 {
		doc.del("hooks")
	}
	return doc, orig, exists, removedAny, nil
}

// Inspect reports, per hook event of spec, whether lifeloop's hook is
// present with the command Apply would install, drifted (a lifeloop entry
// with another command) or missing. notes are what a person installing
// the hooks must know (adapters.HostInstaller.HostNotes).
func Inspect(path string, spec *hooks.Spec, hookCommand []string, notes []string) (Report, error) {
	rep := Report{Path: path, Notes: notes}
	if err := checkSpec(spec); err != nil {
		return rep, err
	}
	adapterID := spec.Adapter
	rep.Adapter = adapterID
	doc, _, exists, err := load(path)
	if err != nil {
		return rep, err
	}
	rep.Exists = exists
	h, err := hooksObject(doc, path)
	if err != nil {
		return rep, err
	}
	rep.AllPresent = true
	for _, ev := range spec.Names() {
		st := HookState{Hook: ev, State: StateMissing, Want: hooks.Command(hookCommand, adapterID, ev)}
		if h != nil {
			arr, _ := h.vals[ev].([]any)
			entries(arr, func(_ *object, entry *object) {
				c := commandOf(entry)
				if !isOurs(c, adapterID, ev) || st.State == StatePresent {
					return
				}
				st.Command = c
				if c == st.Want {
					st.State = StatePresent
				} else {
					st.State = StateDrifted
				}
			})
		}
		if st.State != StatePresent {
			rep.AllPresent = false
		}
		rep.Hooks = append(rep.Hooks, st)
	}
	return rep, nil
}

// write encodes doc in orig's style and writes it when it differs from
// orig, keeping orig as the backup.
func write(path string, doc *object, orig []byte, exists bool, res Result) (Result, error) {
	newline := !exists || len(orig) == 0 || strings.HasSuffix(string(orig), "\n")
	out := encodeDoc(doc, indentOf(orig), newline)
	if exists && string(out) == string(orig) {
		return res, nil
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return res, fmt.Errorf("creating %s: %w", dir, err)
	}
	if exists {
		backup := path + BackupSuffix
		if err := statedir.WriteFileAtomic(backup, orig); err != nil {
			return res, fmt.Errorf("writing the backup %s: %w", backup, err)
		}
		res.Backup = backup
	}
	var mode fs.FileMode
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := statedir.WriteFileAtomic(path, out); err != nil {
		return res, fmt.Errorf("writing %s: %w", path, err)
	}
	if mode != 0 && mode != statedir.FilePerm {
		// Keep the user's own permissions on a file they own.
		if err := os.Chmod(path, mode); err != nil {
			return res, fmt.Errorf("restoring the mode of %s: %w", path, err)
		}
	}
	res.Changed = true
	return res, nil
}
