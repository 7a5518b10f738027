# bash completion for inferscope-bpf(8)
# The options of each subcommand are read from its --help, so that they
# cannot drift from the program.

_inferscope_bpf()
{
	local cur prev words cword sub i
	_init_completion || return

	sub=""
	for ((i = 1; i < cword; i++)); do
		case "${words[i]}" in
		record | analyze | diff | daemon | config | bench)
			sub=${words[i]}
			break
			;;
		--)
			_command_offset $((i + 1))
			return
			;;
		esac
	done

	case "$prev" in
	--format)
		mapfile -t COMPREPLY < <(compgen -W "md json html perfetto" -- "$cur")
		return
		;;
	--keep-severity)
		mapfile -t COMPREPLY < <(compgen -W "info warning critical none" -- "$cur")
		return
		;;
	--budget)
		mapfile -t COMPREPLY < <(compgen -W "off 0.5 1 2 5" -- "$cur")
		return
		;;
	-p | --pid)
		mapfile -t COMPREPLY < <(compgen -W "$(pgrep -d ' ' . 2>/dev/null)" -- "$cur")
		return
		;;
	--config)
		_filedir '@(yaml|yml)'
		return
		;;
	--state-dir | --textfile-dir | -t | --tmpdir)
		_filedir -d
		return
		;;
	-o | --output | --ready-file | --cuda-lib | --cupti-bridge | -c | --check | --baseline)
		_filedir
		return
		;;
	-d | --duration | --interval | --window | --max-size | --max-age | --keep-last | --match | \
		--flight-recorder | --trigger-sync | --trigger-gpu-idle | --trigger-drops | \
		--ringbuf-size | --py-launch-every | --compress-level | -r | --rounds | -s | --seconds | -n | --only)
		return
		;;
	esac

	if [[ -z $sub && $cur != -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "record analyze diff daemon config bench" -- "$cur")
		return
	fi
	if [[ $sub == config && $cur != -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "show" -- "$cur")
		return
	fi
	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$("${words[0]}" ${sub:+"$sub"} --help 2>/dev/null |
			grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)" -- "$cur")
		[[ ${COMPREPLY-} == *= ]] && compopt -o nospace
		return
	fi
	case "$sub" in
	analyze | diff)
		_filedir isr
		;;
	esac
} &&
	complete -F _inferscope_bpf inferscope-bpf
