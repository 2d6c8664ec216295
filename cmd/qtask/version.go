package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// version is set at release time with -ldflags "-X main.version=v1.2.3".
var version = "dev"

// NewCmdVersion builds `qtask version` (also `qtask --version` and `-v`).
func NewCmdVersion(deps *Deps) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print qtask's version and the source revision it was built from",
		Args:  exactArgs(0),
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintln(deps.IO.Out, versionText())
			return err
		},
	}
}

// versionText is what `qtask version` prints.
func versionText() string {
	info, _ := debug.ReadBuildInfo()
	return formatVersion(version, info, runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH)
}

// formatVersion says which qtask this is: the release version set at link
// time, else the module version Go recorded (`go install …@v1.2.3`), else
// "dev"; then the VCS revision the build recorded (+dirty for uncommitted
// changes), if any, the Go version and the platform:
// "qtask v1.2.3 (rev 3f9a1c02d4e5, go1.26.8, linux/amd64)".
func formatVersion(release string, info *debug.BuildInfo, goVersion, platform string) string {
	v := release
	var rev string
	dirty := false
	if info != nil {
		if m := info.Main.Version; v == "dev" && m != "" && m != "(devel)" {
			v = m
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	details := ""
	// Go 1.24+ makes a pseudo-version of the revision: say it once.
	if rev != "" && !strings.Contains(v, rev) {
		if dirty {
			rev += "+dirty"
		}
		details = "rev " + rev + ", "
	}
	return fmt.Sprintf("qtask %s (%s%s, %s)", v, details, goVersion, platform)
}
