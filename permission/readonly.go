package permission

import (
	"path/filepath"
	"strings"
	"sync"

	"github.com/cohort-dev/cohort/shellcmd"
)

// The read-only table is a list of commands that only read, each with the
// options it may be given while read-only: an allow-list, so an option the
// table does not list (a new option of the program, an abbreviation, a
// typo) makes the line not read-only. Options that take a file to read
// name a path, which the read rules and the working directories apply to
// like a positional one. Options that write, run programs, or read a list
// of further files (sort --files0-from, sha256sum -c, file -f) are not
// listed.
//
// An option spec is one word: "-x" or "--long" is a flag; "-x=" or
// "--long=" takes a value (attached, or the next word); "-x@" or "--long@"
// takes a path it reads; "--long?" takes an optional value attached with
// "="; "--arg==" takes two values and "--rawfile=@" a value and a path.
// "-NUM" accepts -5 style counts, "+NUM" +5 style ones.

// optKind is what an option takes.
type optKind uint8

const (
	optFlag     optKind = iota
	optValue            // one value
	optPath             // one path it reads
	optOptional         // a value attached with "=", or none
	optTwo              // two values
	optValPath          // a value, then a path it reads
)

// roSpec describes a command that only reads.
type roSpec struct {
	paths  bool // its non-option arguments are paths it reads
	maxPos int  // most positional arguments it may have while read-only (-1: any)
	// opts are the options allowed while read-only (nil with anyOpts).
	opts map[string]optKind
	// anyOpts: no option of the command writes, runs or reads a file, and
	// options are text to it (echo, printf, test).
	anyOpts bool
	// numeric accepts -5 counts; plus accepts +5 counts (tail).
	numeric, plus bool
	// globSafe: no option of the real program (listed or not) reads a
	// file, writes or runs one, so a glob that expands to a name starting
	// with "-" is harmless.
	globSafe bool
	// findStyle commands take single-dash long options ("-name x") and no
	// short clusters; the leading positionals are paths.
	findStyle bool
	// firstNotPath: the first positional is not a path (a pattern, a jq
	// filter) unless a listed option such as -e gives it.
	firstNotPath bool
	noFirst      []string // options that take the place of that first positional
	// vet checks the positional words further (jq refuses import).
	vet     func(pos []string) bool
	sub     map[string]*roSpec // subcommands (git)
	globals []string           // options allowed before the subcommand
}

// opts builds an option table from specs (see the file comment).
func opts(list string) map[string]optKind {
	m := map[string]optKind{}
	for _, o := range strings.Fields(list) {
		switch {
		case strings.HasSuffix(o, "=@"):
			m[strings.TrimSuffix(o, "=@")] = optValPath
		case strings.HasSuffix(o, "=="):
			m[strings.TrimSuffix(o, "==")] = optTwo
		case strings.HasSuffix(o, "="):
			m[strings.TrimSuffix(o, "=")] = optValue
		case strings.HasSuffix(o, "@"):
			m[strings.TrimSuffix(o, "@")] = optPath
		case strings.HasSuffix(o, "?"):
			m[strings.TrimSuffix(o, "?")] = optOptional
		default:
			m[o] = optFlag
		}
	}
	return m
}

const gnu = " --help --version"

func paths(list string) *roSpec { return &roSpec{paths: true, maxPos: -1, opts: opts(list + gnu)} }
func noPaths(list string) *roSpec {
	return &roSpec{maxPos: -1, opts: opts(list + gnu)}
}
func text() *roSpec { return &roSpec{maxPos: -1, anyOpts: true} }
func safe(s *roSpec) *roSpec {
	s.globSafe = true
	return s
}

// Option lists shared by several commands.
const (
	grepOpts = "-E -F -G -P -e= -f@ -i -v -w -x -y -c -L -l -m= -o -q -s -b -H -h -n -T -Z -z -A= -B= -C= -a -D= -d= -r -R -U " +
		"--extended-regexp --fixed-strings --basic-regexp --perl-regexp --regexp= --file@ --ignore-case --no-ignore-case " +
		"--invert-match --word-regexp --line-regexp --count --color? --colour? --files-without-match --files-with-matches " +
		"--max-count= --only-matching --quiet --silent --no-messages --byte-offset --with-filename --no-filename --label= " +
		"--line-number --initial-tab --null --null-data --after-context= --before-context= --context= --text --binary-files= " +
		"--devices= --directories= --exclude= --exclude-dir= --include= --recursive --dereference-recursive --binary --line-buffered --no-group-separator --group-separator="
	sumOpts  = "-b -t -z --binary --text --tag --zero --untagged"
	diffOpts = "-p -u -U= -c -C= -r -N -q -s -i -w -b -B -a -y -e -n -t -T -E -Z -F= -x= -D= -W= -S= -I= " +
		"--brief --report-identical-files --unified? --context? --recursive --new-file --unidirectional-new-file --ignore-case " +
		"--ignore-all-space --ignore-space-change --ignore-blank-lines --ignore-tab-expansion --ignore-trailing-space --strip-trailing-cr " +
		"--text --side-by-side --width= --suppress-common-lines --left-column --expand-tabs --initial-tab --tabsize= --color? " +
		"--show-c-function --show-function-line= --label= --exclude= --ignore-matching-lines= --ifdef= --starting-file= " +
		"--minimal --speed-large-files --horizon-lines= --normal --ed --rcs --no-dereference --suppress-blank-empty " +
		"--old-line-format= --new-line-format= --unchanged-line-format= --line-format= --old-group-format= --new-group-format= " +
		"--changed-group-format= --unchanged-group-format= --from-file@ --to-file@"
	gitDiffOpts = "-p -u --patch -s --no-patch -U= --unified= --raw --patch-with-raw --patch-with-stat --stat? --numstat --shortstat " +
		"--dirstat? --cumulative --summary --name-only --name-status --submodule? --color? --no-color --color-moved? --word-diff? " +
		"--word-diff-regex= --color-words? --no-renames --renames -M -C -B -D --find-renames? --find-copies? --find-copies-harder " +
		"-R --relative? --no-relative -a --text -w -b --ignore-space-at-eol --ignore-blank-lines --ignore-all-space " +
		"--ignore-space-change --ignore-cr-at-eol -W --function-context --no-ext-diff --no-textconv --abbrev? --full-index " +
		"--binary --src-prefix= --dst-prefix= --no-prefix --default-prefix --cached --staged --merge-base --exit-code --quiet " +
		"--check -z --diff-filter= -S= -G= --pickaxe-all --pickaxe-regex --histogram --patience --minimal --diff-algorithm= " +
		"--anchored= --indent-heuristic --no-indent-heuristic -l= --ita-invisible-in-index --compact-summary --output-indicator-new= " +
		"--output-indicator-old= --output-indicator-context= --ignore-submodules? --line-prefix= --inter-hunk-context="
	gitLogOpts = "-n= --max-count= --skip= --since= --after= --until= --before= --author= --committer= --grep= --all-match " +
		"--invert-grep -i --regexp-ignore-case -E -F -P --extended-regexp --fixed-strings --perl-regexp --oneline --graph " +
		"--decorate? --no-decorate --source --format= --pretty? --abbrev-commit --no-abbrev-commit --date= --relative-date " +
		"--reverse --all --branches? --tags? --remotes? --first-parent --merges --no-merges --follow -L= --left-right --cherry " +
		"--cherry-pick --cherry-mark --topo-order --date-order --author-date-order --parents --children --boundary " +
		"--ancestry-path --simplify-by-decoration --full-history --dense --sparse --no-walk? --walk-reflogs -g --mailmap " +
		"--use-mailmap --no-mailmap --notes? --no-notes --log-size --encoding= --expand-tabs? --no-expand-tabs --not -m -c " +
		"--cc --dd --diff-merges= --no-diff-merges --exclude= --glob= --min-parents= --max-parents= --no-min-parents " +
		"--no-max-parents --count --stdin-no "
	lsOpts = "-a -A -b -B -c -C -d -D -f -F -g -G -h -H -i -I= -k -l -L -m -n -N -o -p -q -Q -r -R -s -S -t -T= -u -U -v -w= -x -X -Z -1 " +
		"--all --almost-all --author --escape --block-size= --ignore-backups --color? --directory --dired --classify? --file-type " +
		"--format= --full-time --group-directories-first --no-group --human-readable --si --dereference-command-line " +
		"--dereference-command-line-symlink-to-dir --hide= --hyperlink? --indicator-style= --inode --ignore= --kibibytes " +
		"--dereference --numeric-uid-gid --literal --hide-control-chars --show-control-chars --quote-name --quoting-style= " +
		"--reverse --recursive --size --sort= --time= --time-style= --tabsize= --width= --context --zero"
)

// readOnlyCommands is deliberately short: a command belongs here only when
// no listed option can make it write a file or run another program. The
// table is built at its first use, not at start-up: its few hundred option
// maps were a third of the heap cohort allocated before main (a run that
// checks no Bash command never needs them).
var readOnlyCommands = sync.OnceValue(func() map[string]*roSpec {
	return map[string]*roSpec{
		"cat":  safe(paths("-A -b -e -E -n -s -t -T -u -v --show-all --number-nonblank --number --squeeze-blank --show-ends --show-tabs --show-nonprinting")),
		"head": safe(numeric(paths("-c= -n= -q -v -z --bytes= --lines= --quiet --silent --verbose --zero-terminated"))),
		"tail": safe(plus(numeric(paths("-c= -n= -f -F -q -v -z -s= --bytes= --lines= --follow? --retry --pid= --quiet --silent --verbose --zero-terminated --sleep-interval= --max-unchanged-stats=")))),
		"wc":   paths("-c -m -l -L -w --bytes --chars --lines --max-line-length --words --total="),
		"nl":   safe(paths("-b= -d= -f= -h= -i= -l= -n= -p -s= -v= -w= --body-numbering= --section-delimiter= --footer-numbering= --header-numbering= --line-increment= --join-blank-lines= --number-format= --no-renumber --number-separator= --starting-line-number= --number-width=")),
		"od": safe(paths("-A= -j= -N= -S= -t= -v -w? -a -b -c -d -f -i -l -o -s -x --address-radix= --endian= --skip-bytes= " +
			"--read-bytes= --strings? --format= --output-duplicates --width? --traditional")),
		"hexdump":   paths("-b -c -C -d -o -x -e= -f@ -n= -s= -v -L? --canonical --length= --skip= --no-squeezing --format= --format-file@ --color?"),
		"strings":   paths("-a -d -f -n= -t= -o -e= -w -s= -T= -U= --all --data --print-file-name --bytes= --radix= --encoding= --include-all-whitespace --output-separator= --unicode= --target="),
		"file":      paths("-b -c -d -E -h -i -k -l -L -n -N -r -s -S -z -Z -0 -e= -F= -P= -m@ --brief --checking-printout --debug --exclude= --exclude-quiet= --extension --mime --mime-type --mime-encoding --keep-going --list --dereference --no-dereference --no-buffer --no-pad --raw --special-files --uncompress --uncompress-noreport --print0 --separator= --parameter= --magic-file@ --apple"),
		"stat":      safe(paths("-L -f -c= -t --dereference --file-system --format= --printf= --terse --cached=")),
		"du":        paths("-0 -a -b -B= -c -D -d= -H -h -k -L -l -m -P -S -s -t= -x --null --all --apparent-size --block-size= --bytes --total --dereference-args --max-depth= --human-readable --inodes --dereference --count-links --no-dereference --separate-dirs --si --summarize --threshold= --time? --time-style= --one-file-system --exclude= --exclude-from@ -X@"),
		"df":        paths("-a -B= -h -H -i -k -l -P -t= -T -x= --all --block-size= --human-readable --si --inodes --local --no-sync --output? --portability --print-type --sync --total --type= --exclude-type="),
		"ls":        safe(paths(lsOpts)),
		"cut":       safe(paths("-b= -c= -d= -f= -n -s -z --bytes= --characters= --delimiter= --fields= --complement --only-delimited --output-delimiter= --zero-terminated")),
		"diff":      paths(diffOpts + " -X@ --exclude-from@"),
		"cmp":       paths("-b -i= -l -n= -s --print-bytes --ignore-initial= --verbose --bytes= --quiet --silent"),
		"comm":      safe(paths("-1 -2 -3 -z --check-order --nocheck-order --output-delimiter= --total --zero-terminated")),
		"realpath":  paths("-e -m -L -P -q -s -z --canonicalize-existing --canonicalize-missing --logical --physical --quiet --strip --no-symlinks --zero --relative-to@ --relative-base@"),
		"readlink":  safe(paths("-f -e -m -n -q -s -v -z --canonicalize --canonicalize-existing --canonicalize-missing --no-newline --quiet --silent --verbose --zero")),
		"jq":        jqSpec(),
		"column":    paths("-t -s= -o= -c= -x -n -e -N= -R= -T= -E= -H= -O= -r= -J -l= -L -d -W= -S= --table --separator= --output-separator= --output-width= --fillrows --table-columns= --table-right= --table-truncate= --table-noextreme= --table-hide= --table-order= --tree= --tree-id= --tree-parent= --json --keep-empty-lines --table-name= --table-wrap="),
		"fold":      safe(paths("-b -s -w= --bytes --spaces --width=")),
		"rev":       safe(paths("-0 --zero")),
		"tac":       safe(paths("-b -r -s= --before --regex --separator=")),
		"paste":     safe(paths("-d= -s -z --delimiters= --serial --zero-terminated")),
		"join":      safe(paths("-a= -e= -i -j= -o= -t= -v= -1= -2= -z --check-order --nocheck-order --header --ignore-case --zero-terminated")),
		"expand":    safe(paths("-i -t= --initial --tabs=")),
		"unexpand":  safe(paths("-a -t= --all --first-only --tabs=")),
		"grep":      grepSpec(),
		"egrep":     grepSpec(),
		"fgrep":     grepSpec(),
		"md5sum":    paths(sumOpts),
		"sha1sum":   paths(sumOpts),
		"sha256sum": paths(sumOpts),
		"sha512sum": paths(sumOpts),
		"b2sum":     paths(sumOpts + " -l= --length="),
		"cksum":     paths("-a= -l= -b -t -z --algorithm= --length= --base64 --raw --tag --untagged --zero --debug"),
		"rg":        rgSpec(),
		"tree": paths("-a -d -l -f -x -L= -P= -I= -i -q -N -Q -p -u -g -s -h -D -F -v -t -c -U -r -n -C -J -X -S -A -H= -T= " +
			"--gitignore --ignore-case --matchdirs --prune --filelimit= --noreport --si --du --timefmt= --inodes --device " +
			"--dirsfirst --filesfirst --sort= --charset= --nolinks --hintro= --houtro= --info --metafirst --condense"),
		"sort": paths("-b -d -f -g -i -M -h -n -R -r -V -k= -t= -u -s -z -c -C -m -S= " +
			"--ignore-leading-blanks --dictionary-order --ignore-case --general-numeric-sort --ignore-nonprinting --month-sort " +
			"--human-numeric-sort --numeric-sort --random-sort --reverse --sort= --version-sort --key= --field-separator= --unique " +
			"--stable --zero-terminated --check? --merge --buffer-size= --parallel= --batch-size= --debug"),
		"uniq": {paths: true, maxPos: 1, globSafe: true, opts: opts("-c -d -D -u -i -f= -s= -w= -z --count --repeated --all-repeated? --unique --ignore-case --skip-fields= --skip-chars= --check-chars= --zero-terminated --group?" + gnu)},
		"xxd":  {paths: true, maxPos: 1, findStyle: true, opts: opts("-a -autoskip -b -bits -C -capitalize -c= -cols= -E -EBCDIC -e -g= -groupsize= -i -include -l= -len= -n= -name= -o= -offset= -p -ps -postscript -plain -s= -seek= -u -d -R= -h -help -v -version")},
		"find": {paths: true, maxPos: -1, findStyle: true, opts: opts("-name= -iname= -path= -ipath= -wholename= -iwholename= -regex= -iregex= -regextype= " +
			"-type= -xtype= -maxdepth= -mindepth= -mtime= -mmin= -atime= -amin= -ctime= -cmin= -size= -perm= -user= -group= " +
			"-uid= -gid= -links= -inum= -lname= -ilname= -fstype= -empty -readable -writable -executable -nouser -nogroup " +
			"-print -print0 -printf= -ls -prune -quit -true -false -not ! ( ) , -o -or -a -and -depth -follow -xdev -mount " +
			"-noleaf -daystart -ignore_readdir_race -noignore_readdir_race -L -P -H -D= -O= -newer@ -anewer@ -cnewer@ -samefile@ " +
			"-newerat@ -newermt= -newerct@ -help --help -version --version")},

		"echo": text(), "printf": text(), "pwd": noPaths("-L -P"), "true": text(), "false": text(),
		"test": text(), "[": text(), "which": noPaths("-a -s"), "type": noPaths("-a -f -P -p -t"),
		"whoami": noPaths(""), "id": noPaths("-a -Z -g -G -n -r -u -z --context --group --groups --name --real --user --zero"),
		"uname":    noPaths("-a -s -n -r -v -m -p -i -o --all --kernel-name --nodename --kernel-release --kernel-version --machine --processor --hardware-platform --operating-system"),
		"printenv": noPaths("-0 --null"), "basename": noPaths("-a -s= -z --multiple --suffix= --zero"),
		"dirname": noPaths("-z --zero"), "tr": noPaths("-c -C -d -s -t --complement --delete --squeeze-repeats --truncate-set1"),
		"seq": noPaths("-f= -s= -w --format= --separator= --equal-width"), "sleep": noPaths(""), "env": noPaths("-0 --null"),
		"command": noPaths("-v -V -p"), "cd": noPaths("-L -P -e -@"), "nproc": noPaths("--all --ignore="), "arch": noPaths(""),
		"groups":   noPaths(""),
		"date":     {maxPos: -1, opts: opts("-d= -f@ -I? -R -r@ -u --date= --file@ --iso-8601? --rfc-email --rfc-3339= --reference@ --utc --universal --debug --resolution" + gnu)},
		"hostname": {maxPos: 0, opts: opts("-a -d -f -i -I -s -y -A --alias --domain --fqdn --long --ip-address --all-ip-addresses --all-fqdns --short --yp --nis" + gnu)},

		"git": {globals: []string{"--no-pager", "-P"}, sub: map[string]*roSpec{
			"status":      gitSub("-s -b -v -u? -z --short --branch --porcelain? --long --verbose --untracked-files? --ignored? --ignore-submodules? --column? --no-column --ahead-behind --no-ahead-behind --renames --no-renames --find-renames? --show-stash"),
			"blame":       gitSub("-L= -l -t -S@ -p -c -s -e -w -b -f -n -M? -C? --reverse= --porcelain --line-porcelain --incremental --root --show-stats --since= --abbrev= --date= --color-lines --color-by-age --ignore-rev= --ignore-revs-file@ --first-parent --show-name --show-number --show-email --contents@ --score-debug --minimal"),
			"rev-parse":   gitSub("-q --abbrev-ref? --short? --verify --quiet --show-toplevel --git-dir --git-common-dir --is-inside-work-tree --is-inside-git-dir --is-bare-repository --absolute-git-dir --show-prefix --show-cdup --symbolic --symbolic-full-name --all --branches? --tags? --remotes? --glob= --exclude= --sq --default= --path-format= --show-superproject-working-tree --is-shallow-repository --local-env-vars --git-path= --since= --after= --until= --before= --shared-index-path --show-object-format? --show-ref-format --not --revs-only --no-revs --flags --no-flags --prefix= --end-of-options"),
			"ls-files":    gitSub("-c -d -m -o -i -s -u -k -z -t -v -f --cached --deleted --modified --others --ignored --stage --unmerged --killed --directory --no-empty-directory --exclude= -x= -X@ --exclude-from@ --exclude-per-directory= --exclude-standard --error-unmatch --full-name --recurse-submodules --abbrev? --debug --eol --deduplicate --sparse --format= --with-tree="),
			"ls-tree":     gitSub("-d -r -t -l -z --name-only --name-status --object-only --full-name --full-tree --abbrev? --format= --long"),
			"describe":    gitSub("--all --tags --contains --abbrev= --candidates= --exact-match --debug --long --match= --exclude= --always --first-parent --dirty? --broken?"),
			"shortlog":    gitSub(gitLogOpts + " -n -s -e -c -w? --numbered --summary --email --committer --group="),
			"rev-list":    gitSub(gitLogOpts + " --objects --objects-edge --timestamp --disk-usage? --bisect --quiet --in-commit-order --no-object-names --object-names"),
			"cat-file":    gitSub("-t -s -e -p --batch? --batch-check? --batch-command? --batch-all-objects --buffer --unordered --follow-symlinks --use-mailmap --no-use-mailmap --allow-unknown-type -Z"),
			"show-ref":    gitSub("--head --heads --tags --branches -d --dereference -s --hash? --verify --abbrev? -q --quiet --exists"),
			"merge-base":  gitSub("-a --all --octopus --independent --is-ancestor --fork-point"),
			"name-rev":    gitSub("--tags --refs= --exclude= --all --name-only --no-undefined --always"),
			"diff":        gitDiff(gitDiffOpts),
			"log":         gitDiff(gitDiffOpts + " " + gitLogOpts),
			"show":        gitDiff(gitDiffOpts + " " + gitLogOpts),
			"whatchanged": gitDiff(gitDiffOpts + " " + gitLogOpts),
			"grep": gitSub("-i -I -v -w -n -l -L -c -h -H -e= -f@ -E -F -G -P -o -q -z -A= -B= -C= -W -p --cached --untracked --no-index " +
				"--recurse-submodules --and --or --not --all-match --max-depth= --threads= --color? --no-color --heading --break " +
				"--column --full-name --ignore-case --invert-match --word-regexp --line-number --files-with-matches --name-only " +
				"--files-without-match --count --no-filename --extended-regexp --fixed-strings --basic-regexp --perl-regexp --only-matching " +
				"--quiet --null --after-context= --before-context= --context= --function-context --show-function --max-count= --exclude-standard --no-exclude-standard --text"),
			"branch": {maxPos: 0, opts: opts("-a -r -l -v -vv -i --all --remotes --list --verbose --contains? --no-contains? --merged? --no-merged? --sort= --format= --color? --no-color --column? --no-column --show-current --points-at= --abbrev= --no-abbrev --ignore-case --omit-empty")},
			"tag":    {maxPos: 0, opts: opts("-l -n? -i --list --contains? --no-contains? --merged? --no-merged? --sort= --format= --color? --points-at= --ignore-case --column? --no-column --omit-empty")},
			"remote": {maxPos: 0, opts: opts("-v --verbose")},
		}},
	}
})

func numeric(s *roSpec) *roSpec { s.numeric = true; return s }
func plus(s *roSpec) *roSpec    { s.plus = true; return s }
func gitSub(list string) *roSpec {
	return &roSpec{paths: true, maxPos: -1, numeric: true, opts: opts(list + " --end-of-options")}
}

// gitDiff allows the diff and log options; --no-index with paths outside
// the repository is caught by the path check like any other path.
func gitDiff(list string) *roSpec { return gitSub(list + " --no-index") }

func grepSpec() *roSpec {
	s := numeric(paths(grepOpts + " --exclude-from@"))
	s.firstNotPath, s.noFirst = false, nil // the pattern is checked like a path, as before
	return s
}

func rgSpec() *roSpec {
	s := paths("-i -s -S -w -x -v -F -e= -f@ -g= -t= -T= -l -c -n -N -H -I -o -r= -A= -B= -C= -m= -d= -u -uu -uuu -. -L -0 -U -P -j= -a -M= -E= -q -b -p " +
		"--ignore-case --case-sensitive --smart-case --word-regexp --line-regexp --invert-match --fixed-strings --regexp= --file@ " +
		"--glob= --iglob= --glob-case-insensitive --type= --type-not= --type-list --files --files-with-matches --files-without-match " +
		"--count --count-matches --line-number --no-line-number --with-filename --no-filename --no-heading --heading --only-matching " +
		"--replace= --after-context= --before-context= --context= --max-count= --max-depth= --hidden --no-ignore --no-ignore-vcs " +
		"--no-ignore-parent --no-ignore-dot --no-ignore-global --no-ignore-exclude --no-ignore-files --follow --null --multiline " +
		"--multiline-dotall --pcre2 --engine= --sort= --sortr= --threads= --text --binary --no-binary --trim --max-columns= " +
		"--max-columns-preview --max-filesize= --no-messages --ignore-file@ --stats --passthru --json --color= --colors= --column " +
		"--vimgrep --encoding= --one-file-system --quiet --byte-offset --pretty --line-buffered --block-buffered --no-config " +
		"--context-separator= --field-context-separator= --field-match-separator= --path-separator= --crlf --null-data --unrestricted")
	s.numeric = true
	return s
}

func jqSpec() *roSpec {
	s := paths("-n -r -j -a -c -s -e -S -C -M -R -L@ -0 --tab --indent= --arg== --argjson== --slurpfile=@ --rawfile=@ " +
		"--args --jsonargs -f@ --from-file@ --seq --stream --stream-errors --raw-input --raw-output --raw-output0 " +
		"--ascii-output --exit-status --sort-keys --null-input --compact-output --slurp --join-output --color-output " +
		"--monochrome-output --unbuffered -h -V --build-configuration")
	s.firstNotPath, s.noFirst = true, []string{"-f", "--from-file"}
	// The filter may import modules and data files from anywhere.
	s.vet = func(pos []string) bool {
		for _, p := range pos {
			if strings.Contains(p, "import") || strings.Contains(p, "include") || p == dynWord {
				return false
			}
		}
		return true
	}
	return s
}

// readOnlyWords reports whether one command only reads, and which of its
// arguments are paths it may read.
func readOnlyWords(words []string) (ok bool, paths []string) {
	if len(words) == 0 || !shellcmd.PlainName(words[0]) {
		return false, nil
	}
	spec, found := readOnlyCommands()[filepath.Base(words[0])]
	if !found {
		return false, nil
	}
	args := words[1:]
	if spec.sub != nil {
		k := 0
		for k < len(args) && contains(spec.globals, args[k]) {
			k++
		}
		if k >= len(args) {
			return false, nil
		}
		if spec, found = spec.sub[args[k]]; !found {
			return false, nil
		}
		args = args[k+1:]
	}
	return spec.check(args)
}
