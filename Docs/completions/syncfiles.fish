function __syncfiles_should_offer_completions_for_flags_or_options -a expected_commands
    set -l non_repeating_flags_or_options $argv[2..]
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __syncfiles_parse_tokens
    test "$commands" = "$expected_commands"; and return $non_repeating_flags_or_options_absent
end

function __syncfiles_should_offer_completions_for_positional -a expected_commands positional_index_comparison expected_positional_index
    set -l non_repeating_flags_or_options
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __syncfiles_parse_tokens
    test "$commands" = "$expected_commands" -a \( "$positional_index" "$positional_index_comparison" "$expected_positional_index" \)
end

function __syncfiles_parse_tokens -S
    set -l unparsed_tokens (__syncfiles_tokens -pc)
    switch $unparsed_tokens[1]
    case 'syncfiles'
        __syncfiles_parse_subcommand 0 'version' 'h/help'
        switch $unparsed_tokens[1]
        case 'apply'
            __syncfiles_parse_subcommand -r 1 'journal=' 'format=' 'now=' 'dry-run' 'only=+' 'force' 'parallel=' 'rate=' 'deadline=' 'progress=' 'quiet' 'v/verbose' 'metrics=' 'notify=' 'version' 'h/help'
        case 'plan'
            __syncfiles_parse_subcommand -r 1 'journal=' 'format=' 'now=' 'remote' 'only=+' 'force' 'v/verbose' 'horizon=' 'version' 'h/help'
        case 'validate'
            __syncfiles_parse_subcommand -r 1 'format=' 'version' 'h/help'
        case 'status'
            __syncfiles_parse_subcommand -r 1 'journal=' 'format=' 'now=' 'check' 'max-late=' 'version' 'h/help'
        case 'plugins'
            __syncfiles_parse_subcommand 0 'format=' 'version' 'h/help'
        case 'rollback'
            __syncfiles_parse_subcommand -r 2 'to=' 'release' 'journal=' 'version' 'h/help'
        case 'index'
            __syncfiles_parse_subcommand -r 1 'block-size=' 'url=' 'version' 'h/help'
        case 'help'
            __syncfiles_parse_subcommand -r 1 'version'
        end
    end
end

function __syncfiles_tokens
    if test (string split -m 1 -f 1 -- . "$FISH_VERSION") -gt 3
        commandline --tokens-raw $argv
    else
        commandline -o $argv
    end
end

function __syncfiles_parse_subcommand -S -a positional_count
    argparse -s r -- $argv
    set -l option_specs $argv[2..]
    set -l is_repeating_positional $_flag_r
    set -el _flag_r
    set -a commands $unparsed_tokens[1]
    set positional_index 0
    while true
        set -e unparsed_tokens[1]
        argparse -sn "$commands" $option_specs -- $unparsed_tokens 2> /dev/null
        set unparsed_tokens $argv
        set positional_index (math $positional_index + 1)
        for non_repeating_flag_or_option in $non_repeating_flags_or_options
            if set -ql "_flag_$(string replace -a - _ -- $non_repeating_flag_or_option)"
                set non_repeating_flags_or_options_absent 1
                break
            end
        end
        test (count $unparsed_tokens) -eq 0 -o \( -z "$is_repeating_positional" -a "$positional_index" -gt "$positional_count" \) && break
    end
end

function __syncfiles_complete_directories
    set -l token (commandline -t)
    string match -- '*/' $token
    set -l subdirs $token*/
    printf %s\n $subdirs
end

function __syncfiles_custom_completion
    set -x SAP_SHELL fish
    set -x SAP_SHELL_VERSION $FISH_VERSION
    set -l tokens (__syncfiles_tokens -p)
    if test -z "$(__syncfiles_tokens -t)"
        set -l index (count (__syncfiles_tokens -pc))
        set tokens $tokens[..$index] \'\' $tokens[(math $index + 1)..]
    end
    command $tokens[1] $argv $tokens
end

complete -c 'syncfiles' -f
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles" version' -l 'version' -d 'Show the version.'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_positional "syncfiles" -eq 1' -fa 'apply' -d 'Run every task that is due: download, resume, revalidate, verify, install atomically.'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_positional "syncfiles" -eq 1' -fa 'plan' -d 'Show what apply would do for each task, and why; nothing is transferred or written.'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_positional "syncfiles" -eq 1' -fa 'validate' -d 'Check manifests; print every problem as FILE:LINE:COL: error|warning: message.'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_positional "syncfiles" -eq 1' -fa 'status' -d 'Show what the journal knows: last outcome, bytes, partial data, next due, backoff.'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_positional "syncfiles" -eq 1' -fa 'plugins' -d 'List the plugins found (built-in and external), with the kind and path of each.'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_positional "syncfiles" -eq 1' -fa 'rollback' -d 'Put a kept version back (keep_versions) and hold the task, or release it.'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_positional "syncfiles" -eq 1' -fa 'index' -d 'Write FILE.zsync beside each file, for clients that fetch only the blocks that changed.'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_positional "syncfiles" -eq 1' -fa 'help' -d 'Show subcommand help information.'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles apply" journal' -l 'journal' -d 'The journal file (default: $SYNCFILES_JOURNAL, the manifests\' journal key, else $STATE_DIRECTORY/journal, as root /var/lib/syncfiles/journal, else $XDG_STATE_HOME/syncfiles/journal, ~/.local/state/syncfiles/journal).' -rF
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles apply" format' -l 'format' -d 'Output format on stdout: text or json.' -rfka 'text json'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles apply" now' -l 'now' -d 'Evaluate schedules, not_before, backoff and windows as if it were TIME (RFC 3339).' -rfka ''
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles apply" dry-run' -l 'dry-run' -d 'Plan only, exactly as `syncfiles plan`: nothing is transferred or written.'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles apply"' -l 'only' -d 'Only tasks matching ID (name/id or a glob); repeatable.' -rfka '(__syncfiles_custom_completion ---completion apply -- --only (count (__syncfiles_tokens -pc)) (__syncfiles_tokens -tC))'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles apply" force' -l 'force' -d 'Ignore schedules, not_before and backoff (requests stay conditional).'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles apply" parallel' -l 'parallel' -d 'Concurrent transfers (default: limits.parallel, else 8).' -rfka ''
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles apply" rate' -l 'rate' -d 'Aggregate bandwidth cap in bytes per second, e.g. 500000, 20MB, 20MB/s, or 10M and 300K as curl reads them (1024-based); or a timetable in local time, as rclone\'s --bwlimit: "08:00,512K 18:00,10M 23:30,off".' -rfka ''
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles apply" deadline' -l 'deadline' -d 'Stop cleanly after this long (exit 75), e.g. 30m.' -rfka ''
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles apply" progress' -l 'progress' -d 'Progress on stderr: auto (a live line on a terminal), always or never.' -rfka 'auto always never'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles apply" quiet' -l 'quiet' -d 'Print only problems (and the JSON object with --format json).'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles apply" v verbose' -s 'v' -l 'verbose' -d 'Every request line and header and every response status and header on stderr; credentials and ${VAR} values as ***.'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles apply" metrics' -l 'metrics' -d 'After the run, write Prometheus metrics to FILE (atomically); overrides the manifests\' metrics key.' -rF
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles apply" notify' -l 'notify' -d 'Ping a cron monitor (healthchecks.io, Cronitor, Uptime Kuma): URL/start as the run begins, URL/EXIT_CODE with the JSON report when it ends; overrides the manifests\' notify key.' -rfka ''
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_positional "syncfiles apply" -ge 1' -F
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles apply" version' -l 'version' -d 'Show the version.'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles apply" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles plan" journal' -l 'journal' -d 'The journal file (default: $SYNCFILES_JOURNAL, the manifests\' journal key, else $STATE_DIRECTORY/journal, as root /var/lib/syncfiles/journal, else $XDG_STATE_HOME/syncfiles/journal, ~/.local/state/syncfiles/journal).' -rF
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles plan" format' -l 'format' -d 'Output format on stdout: text or json.' -rfka 'text json'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles plan" now' -l 'now' -d 'Evaluate schedules, not_before, backoff and windows as if it were TIME (RFC 3339).' -rfka ''
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles plan" remote' -l 'remote' -d 'Ask the servers (HEAD / conditional requests, never a body) to refine sizes and changed/unchanged.'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles plan"' -l 'only' -d 'Only tasks matching ID (name/id or a glob); repeatable.' -rfka '(__syncfiles_custom_completion ---completion plan -- --only (count (__syncfiles_tokens -pc)) (__syncfiles_tokens -tC))'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles plan" force' -l 'force' -d 'Plan as apply --force would: ignore schedules, not_before and backoff.'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles plan" v verbose' -s 'v' -l 'verbose' -d 'With --remote: every request and response header on stderr; credentials and ${VAR} values as ***.'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles plan" horizon' -l 'horizon' -d 'Also forecast every run due from now on for this long (e.g. 7d): bytes per run, per day, the busiest hour, and warnings.' -rfka ''
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_positional "syncfiles plan" -ge 1' -F
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles plan" version' -l 'version' -d 'Show the version.'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles plan" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles validate" format' -l 'format' -d 'Output format on stdout: text or json.' -rfka 'text json'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_positional "syncfiles validate" -ge 1' -F
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles validate" version' -l 'version' -d 'Show the version.'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles validate" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles status" journal' -l 'journal' -d 'The journal file (default: $SYNCFILES_JOURNAL, the manifests\' journal key, else $STATE_DIRECTORY/journal, as root /var/lib/syncfiles/journal, else $XDG_STATE_HOME/syncfiles/journal, ~/.local/state/syncfiles/journal).' -rF
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles status" format' -l 'format' -d 'Output format on stdout: text or json.' -rfka 'text json'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles status" now' -l 'now' -d 'Evaluate schedules, not_before, backoff and windows as if it were TIME (RFC 3339).' -rfka ''
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles status" check' -l 'check' -d 'Health check: exit 1 with one line per task that failed, is overdue or owes a hook; else exit 0.'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles status" max-late' -l 'max-late' -d 'With --check: lateness allowed past a task\'s due time (default: one schedule interval).' -rfka ''
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_positional "syncfiles status" -ge 1' -F
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles status" version' -l 'version' -d 'Show the version.'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles status" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles plugins" format' -l 'format' -d 'Output format on stdout: text or json.' -rfka 'text json'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles plugins" version' -l 'version' -d 'Show the version.'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles plugins" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles rollback" to' -l 'to' -d 'Which version back: 1 is the one the current file replaced.' -rfka ''
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles rollback" release' -l 'release' -d 'End the hold: later applies follow the source again.'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles rollback" journal' -l 'journal' -d 'The journal file (as for apply).' -rF
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_positional "syncfiles rollback" -eq 1' -fka '(__syncfiles_custom_completion ---completion rollback -- positional@0 (count (__syncfiles_tokens -pc)) (__syncfiles_tokens -tC))'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_positional "syncfiles rollback" -ge 2' -F
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles rollback" version' -l 'version' -d 'Show the version.'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles rollback" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles index" block-size' -l 'block-size' -d 'Block size, a power of 2 from 512 to 1048576 (default: 2048, or 4096 from 100 MB).' -rfka ''
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles index" url' -l 'url' -d 'Where clients fetch the file: a URL for one file, or a URL ending in / that each file\'s name is appended to (default: the file\'s name, relative to the .zsync).' -rfka ''
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_positional "syncfiles index" -ge 1' -F
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles index" version' -l 'version' -d 'Show the version.'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles index" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'syncfiles' -n '__syncfiles_should_offer_completions_for_flags_or_options "syncfiles help" version' -l 'version' -d 'Show the version.'
