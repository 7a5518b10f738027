# bash completion for inferscope-bpf(8): generated from its table of commands
# (user/cli/commands.c) by `make docs` (user/cli/cli_docs.c); do not edit.

# COMPREPLY from what completes a value: $cur is the caller's.
_inferscope_bpf_reply()
{
	case $1 in
	files)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		;;
	dirs)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		;;
	recordings)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -d -- "$cur"; compgen -f -X '!*.isr' -- "$cur")
		;;
	pids)
		mapfile -t COMPREPLY < <(cd /proc && compgen -W "$(printf '%s ' [0-9]*)" -- "$cur")
		;;
	groups)
		mapfile -t COMPREPLY < <(compgen -g -- "$cur")
		;;
	users)
		mapfile -t COMPREPLY < <(compgen -u -- "$cur")
		;;
	words)
		shift
		mapfile -t COMPREPLY < <(compgen -W "$*" -- "$cur")
		;;
	esac
}

_inferscope_bpf()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} cmd='' opts='' args='' i

	# --option=VALUE: bash splits the word at the '='
	if [[ $cur == = ]]; then
		cur=
	elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then
		prev=${COMP_WORDS[COMP_CWORD - 2]}
	fi
	# after --: the command to launch
	for ((i = 1; i < COMP_CWORD; i++)); do
		if [[ ${COMP_WORDS[i]} == -- ]]; then
			if declare -F _command_offset >/dev/null; then
				_command_offset $((i + 1))
			elif ((COMP_CWORD == i + 1)); then
				mapfile -t COMPREPLY < <(compgen -c -- "$cur")
			else
				_inferscope_bpf_reply files
			fi
			return
		fi
	done
	# the value of an option
	case $prev in
	-p | --pid)
		_inferscope_bpf_reply pids
		return
		;;
	-d | --duration | --ringbuf-size | --py-launch-every | --gpu-period | --compress-level | --flight-recorder | --flight-memory | --trigger | --interval | --window | --keep-last | --max-size | --max-age | --match | --trigger-sync | --trigger-gpu-idle | --trigger-drops | -r | --rounds | -s | --seconds | -n | --only | --max-ratio | --alpha)
		return
		;;
	-o | --output | --ready-file | --report | --cuda-lib | --nccl-lib | --cupti-bridge | --config | --sqlite | --support-bundle | --recording | -c | --check | --baseline)
		_inferscope_bpf_reply files
		return
		;;
	--user)
		_inferscope_bpf_reply users
		return
		;;
	--budget)
		_inferscope_bpf_reply words off
		return
		;;
	--format)
		_inferscope_bpf_reply words md json html perfetto
		return
		;;
	--group)
		_inferscope_bpf_reply groups
		return
		;;
	--state-dir | --textfile-dir | -t | --tmpdir)
		_inferscope_bpf_reply dirs
		return
		;;
	--keep-severity)
		_inferscope_bpf_reply words info warning critical none
		return
		;;
	esac

	if ((COMP_CWORD > 1)); then
		case ${COMP_WORDS[1]} in
		record | analyze | diff | export | check | top | daemon | config | bench)
			cmd=${COMP_WORDS[1]}
			;;
		esac
	fi

	case $cmd in
	"")
		opts="-h --help --usage -V --version -p --pid -d --duration -o --output --list-probes --ready-file --run-as-root --user --report --ringbuf-size --no-follow --no-faults --no-cuda --no-nvtx --gil --no-gil-waits --budget --legacy-uprobes --py-stacks --no-py-stacks --py-launch-every --cuda-lib --no-nccl --nccl-lib --gpu --gpu-windows --gpu-period --no-cupti --no-inject --cupti-bridge --compress-level --format --group --config -v --verbose -q --quiet"
		;;
	record)
		opts="-h --help --usage -V --version --flight-recorder --flight-memory --trigger -p --pid -d --duration -o --output --list-probes --ready-file --run-as-root --user --ringbuf-size --no-follow --no-faults --no-cuda --no-nvtx --gil --no-gil-waits --budget --legacy-uprobes --py-stacks --no-py-stacks --py-launch-every --cuda-lib --no-nccl --nccl-lib --gpu --gpu-windows --gpu-period --no-cupti --no-inject --cupti-bridge --compress-level --group --config -v --verbose -q --quiet"
		;;
	analyze)
		opts="-h --help --usage -V --version --report -o --output --format --group --config -q --quiet"
		args=recordings
		;;
	diff)
		opts="-h --help --usage -V --version --report -o --output --format --group --config -q --quiet"
		args=recordings
		;;
	export)
		opts="-h --help --usage -V --version --sqlite -q --quiet"
		args=recordings
		;;
	check)
		opts="-h --help --usage -V --version -p --pid --json --support-bundle --recording"
		;;
	top)
		opts="-h --help --usage -V --version --interval --once -o --output -p --pid -d --duration --ringbuf-size --no-follow --no-faults --no-cuda --no-nvtx --gil --no-gil-waits --budget --legacy-uprobes --py-stacks --no-py-stacks --py-launch-every --cuda-lib --no-nccl --nccl-lib --gpu --gpu-windows --gpu-period --no-cupti --no-inject --cupti-bridge --compress-level --config -q --quiet"
		;;
	daemon)
		opts="-h --help --usage -V --version --ringbuf-size --no-follow --no-faults --no-cuda --no-nvtx --gil --no-gil-waits --budget --legacy-uprobes --py-stacks --no-py-stacks --py-launch-every --cuda-lib --no-nccl --nccl-lib --gpu --gpu-windows --gpu-period --no-cupti --no-inject --cupti-bridge --compress-level --state-dir --textfile-dir --interval --window --once --keep-severity --keep-last --max-size --max-age --match --no-cuda-processes --flight-recorder --trigger-sync --trigger-gpu-idle --trigger-drops --config"
		;;
	config)
		opts="-h --help --usage -V --version --json --ringbuf-size --no-follow --no-faults --no-cuda --no-nvtx --gil --no-gil-waits --budget --legacy-uprobes --py-stacks --no-py-stacks --py-launch-every --cuda-lib --no-nccl --nccl-lib --gpu --gpu-windows --gpu-period --no-cupti --no-inject --cupti-bridge --compress-level --format --state-dir --textfile-dir --interval --window --once --keep-severity --keep-last --max-size --max-age --match --no-cuda-processes --flight-recorder --trigger-sync --trigger-gpu-idle --trigger-drops --config"
		args="words show"
		;;
	bench)
		opts="-h --help --usage -V --version -r --rounds -s --seconds -o --output -c --check -n --only -t --tmpdir --kci --quick --ktap --baseline --max-ratio --alpha --group"
		;;
	esac

	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
	elif [[ -z $cmd ]] && ((COMP_CWORD == 1)); then
		mapfile -t COMPREPLY < <(compgen -W "record analyze diff export check top daemon config bench" -- "$cur")
	elif [[ -n $args ]]; then
		# a kind, then its words: split on purpose
		# shellcheck disable=SC2086
		_inferscope_bpf_reply $args
	fi
} &&
	complete -F _inferscope_bpf inferscope-bpf
