package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/cairn-agents/cairn/pkg/client"
	"github.com/cairn-agents/cairn/pkg/resources"
	"github.com/spf13/cobra"
)

// newResourceCmd is `cairn skills`, `cairn templates` or `cairn
// system-prompt`: the tenant's resources of kind on the gateway
// (docs/resources.md).
func newResourceCmd(e *env, kind string) *cobra.Command {
	c := &cobra.Command{Use: kind + "s", Short: fmt.Sprintf("manage the tenant's %ss (put, get, list, rm)", kind)}
	if kind == resources.KindSystem.String() {
		c = &cobra.Command{Use: "system-prompt", Short: "manage the tenant's system prompt parts: base (for sessions that give none) and append (added after the base)"}
	}
	put := &cobra.Command{Use: "put NAME FILE", Short: fmt.Sprintf("store FILE (- for stdin) as %s NAME", kind), Args: cobra.ExactArgs(2)}
	put.RunE = func(cmd *cobra.Command, args []string) error {
		text, err := readInput(e, args[1])
		if err != nil {
			return err
		}
		cl, err := clientFrom(cmd)
		if err != nil {
			return err
		}
		r, err := cl.PutResource(cmd.Context(), kind, args[0], text)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s %s version %d\n", kind, r.Name, r.Version)
		return nil
	}
	get := &cobra.Command{Use: "get NAME", Short: fmt.Sprintf("print %s NAME's text", kind), Args: cobra.ExactArgs(1)}
	get.RunE = func(cmd *cobra.Command, args []string) error {
		cl, err := clientFrom(cmd)
		if err != nil {
			return err
		}
		r, err := cl.GetResource(cmd.Context(), kind, args[0])
		if err != nil {
			return err
		}
		_, err = io.WriteString(e.stdout, r.Text)
		return err
	}
	list := &cobra.Command{Use: "list", Short: fmt.Sprintf("list the tenant's %ss", kind), Args: cobra.NoArgs}
	list.RunE = func(cmd *cobra.Command, _ []string) error {
		cl, err := clientFrom(cmd)
		if err != nil {
			return err
		}
		rs, err := cl.ListResources(cmd.Context(), kind)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tVERSION\tDESCRIPTION")
		for _, r := range rs {
			fmt.Fprintf(tw, "%s\t%d\t%s\n", r.Name, r.Version, firstLine(strings.TrimSpace(r.Description), 80))
		}
		return tw.Flush()
	}
	rm := &cobra.Command{Use: "rm NAME", Short: fmt.Sprintf("delete %s NAME", kind), Args: cobra.ExactArgs(1)}
	rm.RunE = func(cmd *cobra.Command, args []string) error {
		cl, err := clientFrom(cmd)
		if err != nil {
			return err
		}
		if err := cl.DeleteResource(cmd.Context(), kind, args[0]); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "deleted %s %s\n", kind, args[0])
		return nil
	}
	c.AddCommand(put, get, list, rm)
	return c
}

func readInput(e *env, path string) (string, error) {
	var b []byte
	var err error
	if path == "-" {
		b, err = io.ReadAll(io.LimitReader(e.stdin, resources.MaxSize+1))
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// newResourcesCmd is `cairn resources import DIR`.
func newResourcesCmd(e *env) *cobra.Command {
	c := &cobra.Command{Use: "resources", Short: "import skills and prompt templates in pi's layout"}
	imp := &cobra.Command{Use: "import DIR", Short: "store DIR's skills (skills/<name>/SKILL.md, or <name>/SKILL.md) and templates (prompts/*.md, or *.md)", Args: cobra.ExactArgs(1),
		Long: `Import a directory in pi's layout: every folder holding a SKILL.md is a skill
named after the folder (pi's discovery: a folder with SKILL.md is not looked
into further; dot folders and node_modules are skipped); every .md file
directly in DIR/prompts (or, without a prompts folder, in DIR itself) is a
prompt template named after the file; DIR/SYSTEM.md and DIR/APPEND_SYSTEM.md
are the tenant's system prompt base and additions. A pi agent directory
(~/.pi/agent) or a project's .pi folder imports as it is. Each file is checked before anything
is stored; a file that does not parse is named with its line and reason, and
nothing is stored.`}
	dry := imp.Flags().Bool("dry-run", false, "only check and list what would be stored")
	imp.RunE = func(cmd *cobra.Command, args []string) error {
		found, err := scanPiLayout(args[0])
		if err != nil {
			return err
		}
		var problems []string
		for _, f := range found {
			if _, err := resources.Parse(resources.Kind(f.kind), f.name, f.text); err != nil {
				problems = append(problems, f.path+": "+err.Error())
			}
		}
		if len(problems) > 0 {
			return errors.New("nothing imported:\n  " + strings.Join(problems, "\n  "))
		}
		if len(found) == 0 {
			return fmt.Errorf("%s holds no SKILL.md folders and no .md templates", args[0])
		}
		var cl *client.Client
		if !*dry {
			if cl, err = clientFrom(cmd); err != nil {
				return err
			}
		}
		for _, f := range found {
			if *dry {
				fmt.Fprintf(e.stdout, "would store %s %s (%s)\n", f.kind, f.name, f.path)
				continue
			}
			r, err := cl.PutResource(cmd.Context(), f.kind, f.name, f.text)
			if err != nil {
				return fmt.Errorf("%s: %w", f.path, err)
			}
			fmt.Fprintf(e.stdout, "stored %s %s version %d\n", f.kind, f.name, r.Version)
		}
		return nil
	}
	c.AddCommand(imp)
	return c
}

type piFile struct{ kind, name, path, text string }

// scanPiLayout finds the skills and templates under dir in pi's layout.
func scanPiLayout(dir string) ([]piFile, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	var out []piFile
	skillsRoot := dir
	if st, err := os.Stat(filepath.Join(dir, "skills")); err == nil && st.IsDir() {
		skillsRoot = filepath.Join(dir, "skills")
	}
	var walk func(d string, depth int) error
	walk = func(d string, depth int) error {
		if depth > 8 {
			return nil
		}
		if b, err := os.ReadFile(filepath.Join(d, "SKILL.md")); err == nil && d != skillsRoot {
			out = append(out, piFile{resources.KindSkill.String(), filepath.Base(d), filepath.Join(d, "SKILL.md"), string(b)})
			return nil
		}
		ents, err := os.ReadDir(d)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || e.Name() == "node_modules" || (d == dir && e.Name() == "prompts") {
				continue
			}
			if err := walk(filepath.Join(d, e.Name()), depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(skillsRoot, 0); err != nil {
		return nil, err
	}
	promptsDir := dir
	if st, err := os.Stat(filepath.Join(dir, "prompts")); err == nil && st.IsDir() {
		promptsDir = filepath.Join(dir, "prompts")
	}
	ents, err := os.ReadDir(promptsDir)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") || e.Name() == "SKILL.md" || (promptsDir == dir && systemFiles[e.Name()] != "") {
			continue
		}
		p := filepath.Join(promptsDir, e.Name())
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, piFile{resources.KindTemplate.String(), strings.TrimSuffix(e.Name(), ".md"), p, string(b)})
	}
	for file, name := range systemFiles {
		p := filepath.Join(dir, file)
		b, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, piFile{resources.KindSystem.String(), name, p, string(b)})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].kind+out[i].name < out[j].kind+out[j].name })
	return out, nil
}

// systemFiles are pi's system prompt files in DIR and the tenant's parts
// they import as.
var systemFiles = map[string]string{"SYSTEM.md": resources.SystemBase, "APPEND_SYSTEM.md": resources.SystemAppend}
