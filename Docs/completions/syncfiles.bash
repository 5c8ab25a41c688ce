#!/bin/bash

__syncfiles_cursor_index_in_current_word() {
    local remaining="${COMP_LINE}"

    local word
    for word in "${COMP_WORDS[@]::COMP_CWORD}"; do
        remaining="${remaining##*([[:space:]])"${word}"*([[:space:]])}"
    done

    local -ir index="$((COMP_POINT - ${#COMP_LINE} + ${#remaining}))"
    if [[ "${index}" -le 0 ]]; then
        printf 0
    else
        printf %s "${index}"
    fi
}

# positional arguments:
#
# - 1: the current (sub)command's count of positional arguments
#
# required variables:
#
# - repeating_flags: the repeating flags that the current (sub)command can accept
# - non_repeating_flags: the non-repeating flags that the current (sub)command can accept
# - repeating_options: the repeating options that the current (sub)command can accept
# - non_repeating_options: the non-repeating options that the current (sub)command can accept
# - positional_number: value ignored
# - unparsed_words: unparsed words from the current command line
#
# modified variables:
#
# - non_repeating_flags: remove flags for this (sub)command that are already on the command line
# - non_repeating_options: remove options for this (sub)command that are already on the command line
# - positional_number: set to the current positional number
# - unparsed_words: remove all flags, options, and option values for this (sub)command
__syncfiles_offer_flags_options() {
    local -ir positional_count="${1}"
    positional_number=0

    local was_flag_option_terminator_seen=false
    local is_parsing_option_value=false

    local -ar unparsed_word_indices=("${!unparsed_words[@]}")
    local -i word_index
    for word_index in "${unparsed_word_indices[@]}"; do
        if "${is_parsing_option_value}"; then
            # This word is an option value:
            # Reset marker for next word iff not currently the last word
            [[ "${word_index}" -ne "${unparsed_word_indices[${#unparsed_word_indices[@]} - 1]}" ]] && is_parsing_option_value=false
            unset "unparsed_words[${word_index}]"
            # Do not process this word as a flag or an option
            continue
        fi

        local word="${unparsed_words["${word_index}"]}"
        if ! "${was_flag_option_terminator_seen}"; then
            case "${word}" in
            --)
                unset "unparsed_words[${word_index}]"
                # by itself -- is a flag/option terminator, but if it is the last word, it is the start of a completion
                if [[ "${word_index}" -ne "${unparsed_word_indices[${#unparsed_word_indices[@]} - 1]}" ]]; then
                    was_flag_option_terminator_seen=true
                fi
                continue
                ;;
            -*)
                # ${word} is a flag or an option
                # If ${word} is an option, mark that the next word to be parsed is an option value
                local option
                for option in "${repeating_options[@]}" "${non_repeating_options[@]}"; do
                    [[ "${word}" = "${option}" ]] && is_parsing_option_value=true && break
                done

                # Remove ${word} from ${non_repeating_flags} or ${non_repeating_options} so it isn't offered again
                local not_found=true
                local -i index
                for index in "${!non_repeating_flags[@]}"; do
                    if [[ "${non_repeating_flags[${index}]}" = "${word}" ]]; then
                        unset "non_repeating_flags[${index}]"
                        non_repeating_flags=("${non_repeating_flags[@]}")
                        not_found=false
                        break
                    fi
                done
                if "${not_found}"; then
                    for index in "${!non_repeating_flags[@]}"; do
                        if [[ "${non_repeating_flags[${index}]}" = "${word}" ]]; then
                            unset "non_repeating_flags[${index}]"
                            non_repeating_flags=("${non_repeating_flags[@]}")
                            break
                        fi
                    done
                fi
                unset "unparsed_words[${word_index}]"
                continue
                ;;
            esac
        fi

        # ${word} is neither a flag, nor an option, nor an option value
        if [[ "${positional_number}" -lt "${positional_count}" || "${positional_count}" -lt 0 ]]; then
            # ${word} is a positional
            ((positional_number++))
            unset "unparsed_words[${word_index}]"
        else
            if [[ -z "${word}" ]]; then
                # Could be completing a flag, option, or subcommand
                positional_number=-1
            else
                # ${word} is a subcommand or invalid, so stop processing this (sub)command
                positional_number=-2
            fi
            break
        fi
    done

    unparsed_words=("${unparsed_words[@]}")

    if\
        ! "${was_flag_option_terminator_seen}"\
        && ! "${is_parsing_option_value}"\
        && [[ ("${cur}" = -* && "${positional_number}" -ge 0) || "${positional_number}" -eq -1 ]]
    then
        COMPREPLY+=($(compgen -W "${repeating_flags[*]} ${non_repeating_flags[*]} ${repeating_options[*]} ${non_repeating_options[*]}" -- "${cur}"))
    fi
}

__syncfiles_add_completions() {
    local completion
    while IFS='' read -r completion; do
        COMPREPLY+=("${completion}")
    done < <(IFS=$'\n' compgen "${@}" -- "${cur}")
}

__syncfiles_custom_complete() {
    if [[ -n "${cur}" || -z ${COMP_WORDS[${COMP_CWORD}]} || "${COMP_LINE:${COMP_POINT}:1}" != ' ' ]]; then
        local -ar words=("${COMP_WORDS[@]}")
    else
        local -ar words=("${COMP_WORDS[@]::${COMP_CWORD}}" '' "${COMP_WORDS[@]:${COMP_CWORD}}")
    fi

    "${COMP_WORDS[0]}" "${@}" "${words[@]}"
}

_syncfiles() {
    local state
    state="$(shopt -p;shopt -po)"
    trap "${state//$'\n'/;}" RETURN
    shopt -s extglob
    set +o history +o posix

    local -xr SAP_SHELL=bash
    local -x SAP_SHELL_VERSION
    SAP_SHELL_VERSION="$(IFS='.';printf %s "${BASH_VERSINFO[*]}")"
    local -r SAP_SHELL_VERSION

    local -r cur="${2}"
    local -r prev="${3}"

    local -i positional_number
    local -a unparsed_words=("${COMP_WORDS[@]:1:${COMP_CWORD}}")

    local -a repeating_flags=()
    local -a non_repeating_flags=(--version -h --help)
    local -a repeating_options=()
    local -a non_repeating_options=()
    __syncfiles_offer_flags_options 0

    # Offer subcommand / subcommand argument completions
    local -r subcommand="${unparsed_words[0]}"
    unset 'unparsed_words[0]'
    unparsed_words=("${unparsed_words[@]}")
    case "${subcommand}" in
    apply|plan|validate|status|plugins|rollback|index|help)
        # Offer subcommand argument completions
        "_syncfiles_${subcommand}"
        ;;
    *)
        # Offer subcommand completions
        COMPREPLY+=($(compgen -W 'apply plan validate status plugins rollback index help' -- "${cur}"))
        ;;
    esac
}

_syncfiles_apply() {
    repeating_flags=()
    non_repeating_flags=(--dry-run --force --quiet -v --verbose --version -h --help)
    repeating_options=(--only)
    non_repeating_options=(--journal --format --now --parallel --rate --deadline --progress --metrics --notify)
    __syncfiles_offer_flags_options -1

    # Offer option value completions
    case "${prev}" in
    '--journal')
        __syncfiles_add_completions -f
        return
        ;;
    '--format')
        __syncfiles_add_completions -W 'text'$'\n''json'
        return
        ;;
    '--now')
        return
        ;;
    '--only')
        __syncfiles_add_completions -W "$(__syncfiles_custom_complete ---completion apply -- --only "${COMP_CWORD}" "$(__syncfiles_cursor_index_in_current_word)")"
        return
        ;;
    '--parallel')
        return
        ;;
    '--rate')
        return
        ;;
    '--deadline')
        return
        ;;
    '--progress')
        __syncfiles_add_completions -W 'auto'$'\n''always'$'\n''never'
        return
        ;;
    '--metrics')
        __syncfiles_add_completions -f
        return
        ;;
    '--notify')
        return
        ;;
    esac

    # Offer positional completions
    case "${positional_number}" in
    *)
        __syncfiles_add_completions -f
        return
        ;;
    esac
}

_syncfiles_plan() {
    repeating_flags=()
    non_repeating_flags=(--remote --force -v --verbose --version -h --help)
    repeating_options=(--only)
    non_repeating_options=(--journal --format --now --horizon)
    __syncfiles_offer_flags_options -1

    # Offer option value completions
    case "${prev}" in
    '--journal')
        __syncfiles_add_completions -f
        return
        ;;
    '--format')
        __syncfiles_add_completions -W 'text'$'\n''json'
        return
        ;;
    '--now')
        return
        ;;
    '--only')
        __syncfiles_add_completions -W "$(__syncfiles_custom_complete ---completion plan -- --only "${COMP_CWORD}" "$(__syncfiles_cursor_index_in_current_word)")"
        return
        ;;
    '--horizon')
        return
        ;;
    esac

    # Offer positional completions
    case "${positional_number}" in
    *)
        __syncfiles_add_completions -f
        return
        ;;
    esac
}

_syncfiles_validate() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--format)
    __syncfiles_offer_flags_options -1

    # Offer option value completions
    case "${prev}" in
    '--format')
        __syncfiles_add_completions -W 'text'$'\n''json'
        return
        ;;
    esac

    # Offer positional completions
    case "${positional_number}" in
    *)
        __syncfiles_add_completions -f
        return
        ;;
    esac
}

_syncfiles_status() {
    repeating_flags=()
    non_repeating_flags=(--check --version -h --help)
    repeating_options=()
    non_repeating_options=(--journal --format --now --max-late)
    __syncfiles_offer_flags_options -1

    # Offer option value completions
    case "${prev}" in
    '--journal')
        __syncfiles_add_completions -f
        return
        ;;
    '--format')
        __syncfiles_add_completions -W 'text'$'\n''json'
        return
        ;;
    '--now')
        return
        ;;
    '--max-late')
        return
        ;;
    esac

    # Offer positional completions
    case "${positional_number}" in
    *)
        __syncfiles_add_completions -f
        return
        ;;
    esac
}

_syncfiles_plugins() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--format)
    __syncfiles_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--format')
        __syncfiles_add_completions -W 'text'$'\n''json'
        return
        ;;
    esac
}

_syncfiles_rollback() {
    repeating_flags=()
    non_repeating_flags=(--release --version -h --help)
    repeating_options=()
    non_repeating_options=(--to --journal)
    __syncfiles_offer_flags_options -1

    # Offer option value completions
    case "${prev}" in
    '--to')
        return
        ;;
    '--journal')
        __syncfiles_add_completions -f
        return
        ;;
    esac

    # Offer positional completions
    case "${positional_number}" in
    1)
        __syncfiles_add_completions -W "$(__syncfiles_custom_complete ---completion rollback -- positional@0 "${COMP_CWORD}" "$(__syncfiles_cursor_index_in_current_word)")"
        return
        ;;
    *)
        __syncfiles_add_completions -f
        return
        ;;
    esac
}

_syncfiles_index() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--block-size --url)
    __syncfiles_offer_flags_options -1

    # Offer option value completions
    case "${prev}" in
    '--block-size')
        return
        ;;
    '--url')
        return
        ;;
    esac

    # Offer positional completions
    case "${positional_number}" in
    *)
        __syncfiles_add_completions -f
        return
        ;;
    esac
}

_syncfiles_help() {
    repeating_flags=()
    non_repeating_flags=(--version)
    repeating_options=()
    non_repeating_options=()
    __syncfiles_offer_flags_options -1
    COMPREPLY+=($(compgen -W 'apply plan validate status plugins' -- "${cur}"))
}

complete -o filenames -F _syncfiles syncfiles
