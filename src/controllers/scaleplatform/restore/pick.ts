// The backup a restore to latest or to a time starts from, chosen inside the restore Job where the
// repository is at hand. pgBackRest alone takes the newest backup (for a time: the newest that
// ended before it) whatever its timeline, and a backup of a branch a point-in-time restore left
// behind is no ancestor of the timeline the restore follows: recovery from it fails. So the Job
// passes --set=<label> of the newest backup that is an ancestor of the followed timeline: taken on
// that timeline, or on an earlier timeline of its history (PostgreSQL's <timeline>.history in the
// repository: "parent switchpoint reason" lines) and stopped at or before the switch point where
// the history left it. For a time, the backup must also have ended before the target.
//
// Bash functions of the database image (bash, sed and mawk, with no `awk` link there; no JSON
// tool): pgBackRest's `info --output=json` is one line with each backup's keys in alphabetical
// order, "archive" first, so each backup begins at `"archive":{`. Tested by running them
// (pick.test.ts).

/** Defines backup_lines, pick_backup and fetch_history. */
export const PICK_FUNCTIONS = String.raw`
# backup_lines < info.json — one line per backup, oldest first: label timeline stop-lsn stop-epoch
# ("-" when pgBackRest gave no LSN).
backup_lines() {
  sed 's/"archive" *: *[{]/\n@/g' | mawk '
    function grab(s, re) { if (!match(s, re)) return ""; return substr(s, RSTART, RLENGTH) }
    function value(s) { sub(/^ *"[a-z]+" *: *"?/, "", s); sub(/"$/, "", s); return s }
    /^@/ {
      wal = value(grab(substr($0, 2), "^ *\"start\" *: *\"[0-9A-F]+\""))
      label = value(grab($0, "\"label\" *: *\"[^\"]+\""))
      lsn = value(grab(grab($0, "\"lsn\" *: *[{][^}]*[}]"), "\"stop\" *: *\"[0-9A-F/]+\""))
      stop = value(grab(grab($0, "\"timestamp\" *: *[{][^}]*[}]"), "\"stop\" *: *[0-9]+"))
      if (label != "" && length(wal) >= 8 && stop != "") print label, substr(wal, 1, 8), (lsn == "" ? "-" : lsn), stop
    }'
}

# pick_backup TIMELINE BEFORE HISTORY < backup_lines — the label of the newest backup that is an
# ancestor of TIMELINE (HISTORY: its history file, "" for none) and, when BEFORE (epoch seconds) is
# not empty, stopped before it; nothing when none is.
pick_backup() {
  mawk -v tl="$1" -v before="$2" -v hist="$3" '
    function hex(s,   v, i) {
      v = 0; s = toupper(s)
      for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789ABCDEF", substr(s, i, 1)) - 1
      return v
    }
    function le(a, b,   x, y) {
      split(a, x, "/"); split(b, y, "/")
      if (hex(x[1]) != hex(y[1])) return hex(x[1]) < hex(y[1])
      return hex(x[2]) <= hex(y[2])
    }
    BEGIN {
      if (hist != "") while ((getline line < hist) > 0) {
        split(line, f, /[ \t]+/)
        if (f[1] ~ /^[0-9]+$/ && f[2] ~ /^[0-9A-Fa-f]+\/[0-9A-Fa-f]+$/) switched[f[1] + 0] = f[2]
      }
    }
    {
      t = hex($2)
      ancestor = t == tl + 0 || ((t in switched) && $3 != "-" && le($3, switched[t]))
      if (ancestor && (before == "" || $4 + 0 < before + 0)) pick = $1
    }
    END { if (pick != "") print pick }'
}

# fetch_history TIMELINE FILE — TIMELINE's history file from the repository into FILE (decrypted by
# pgBackRest); fails when there is none (timeline 1 has none).
fetch_history() {
  local name id
  name=$(printf '%08X.history' "$1")
  for id in $(grep -o '"id" *: *"[0-9]*-[0-9]*"' /tmp/restore-info.json | sed 's/.*"\([0-9]*-[0-9]*\)"/\1/'); do
    if pgbackrest repo-get --log-level-console=warn --ignore-missing \
      "archive/$PGBACKREST_STANZA/$id/$name" >"$2" 2>/dev/null && [ -s "$2" ]; then
      return 0
    fi
  done
  return 1
}
`;

/**
 * The Job script's part choosing the backup when $RESTORE_PICK_TIMELINE is not empty (then also
 * $RESTORE_PICK_BEFORE, empty for latest, $RESTORE_TARGET and $RESTORE_WINDOW): prepends --set to "$@".
 */
export const PICK_STEP = `if [ -n "$RESTORE_PICK_TIMELINE" ]; then
  pgbackrest info --output=json --log-level-console=warn >/tmp/restore-info.json
  hist=
  if fetch_history "$RESTORE_PICK_TIMELINE" /tmp/restore-timeline.history; then hist=/tmp/restore-timeline.history; fi
  label=$(backup_lines </tmp/restore-info.json | pick_backup "$RESTORE_PICK_TIMELINE" "$RESTORE_PICK_BEFORE" "$hist")
  if [ -z "$label" ]; then
    msg="no backup to restore $RESTORE_TARGET from: none in the repository is an ancestor of timeline $RESTORE_PICK_TIMELINE"
    if [ -n "$RESTORE_PICK_BEFORE" ]; then msg="$msg that ended before the target"; fi
    msg="$msg (recoverable window $RESTORE_WINDOW)"
    echo "restore: $msg" >&2
    printf '%s' "$msg" >/dev/termination-log
    exit 1
  fi
  echo "restore: backup $label is the newest ancestor of timeline $RESTORE_PICK_TIMELINE"
  set -- "--set=$label" "$@"
fi
`;
