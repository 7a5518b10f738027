# bash completion for inferscope-bpf(8): generated from its table of commands
# (user/commands.c) by `make docs` (user/cli_docs.c); do not edit.

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
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} cmd= opts= args= i

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
	if ((COMP_CWORD > 1)); then
		case ${COMP_WORDS[1]} in
		record | analyze | diff | export | check | top | daemon | config | bench)
			cmd=${COMP_WORDS[1]}
			;;
		esac
	fi

	case $cmd in
	"")
		case $prev in
		-p | --pid)
			_inferscope_bpf_reply pids
			return
			;;
		-d | --duration)
			return
			;;
		-o | --output)
			_inferscope_bpf_reply files
			return
			;;
		--ready-file)
			_inferscope_bpf_reply files
			return
			;;
		--user)
			_inferscope_bpf_reply users
			return
			;;
		--report)
			_inferscope_bpf_reply files
			return
			;;
		--ringbuf-size)
			return
			;;
		--budget)
			mapfile -t COMPREPLY < <(compgen -W "off" -- "$cur")
			return
			;;
		--py-launch-every)
			return
			;;
		--cuda-lib)
			_inferscope_bpf_reply files
			return
			;;
		--nccl-lib)
			_inferscope_bpf_reply files
			return
			;;
		--gpu-period)
			return
			;;
		--cupti-bridge)
			_inferscope_bpf_reply files
			return
			;;
		--compress-level)
			return
			;;
		--format)
			mapfile -t COMPREPLY < <(compgen -W "md json html perfetto" -- "$cur")
			return
			;;
		--group)
			_inferscope_bpf_reply groups
			return
			;;
		--config)
			_inferscope_bpf_reply files
			return
			;;
		esac
		opts="-h --help --usage -V --version -p --pid -d --duration -o --output --list-probes --ready-file --run-as-root --user --report --ringbuf-size --no-follow --no-faults --no-cuda --no-nvtx --gil --no-gil-waits --budget --legacy-uprobes --py-stacks --no-py-stacks --py-launch-every --cuda-lib --no-nccl --nccl-lib --gpu --gpu-windows --gpu-period --no-cupti --no-inject --cupti-bridge --compress-level --format --group --config -v --verbose -q --quiet"
		;;
	record)
		case $prev in
		--flight-recorder)
			return
			;;
		--flight-memory)
			return
			;;
		--trigger)
			return
			;;
		-p | --pid)
			_inferscope_bpf_reply pids
			return
			;;
		-d | --duration)
			return
			;;
		-o | --output)
			_inferscope_bpf_reply files
			return
			;;
		--ready-file)
			_inferscope_bpf_reply files
			return
			;;
		--user)
			_inferscope_bpf_reply users
			return
			;;
		--ringbuf-size)
			return
			;;
		--budget)
			mapfile -t COMPREPLY < <(compgen -W "off" -- "$cur")
			return
			;;
		--py-launch-every)
			return
			;;
		--cuda-lib)
			_inferscope_bpf_reply files
			return
			;;
		--nccl-lib)
			_inferscope_bpf_reply files
			return
			;;
		--gpu-period)
			return
			;;
		--cupti-bridge)
			_inferscope_bpf_reply files
			return
			;;
		--compress-level)
			return
			;;
		--group)
			_inferscope_bpf_reply groups
			return
			;;
		--config)
			_inferscope_bpf_reply files
			return
			;;
		esac
		opts="-h --help --usage -V --version --flight-recorder --flight-memory --trigger -p --pid -d --duration -o --output --list-probes --ready-file --run-as-root --user --ringbuf-size --no-follow --no-faults --no-cuda --no-nvtx --gil --no-gil-waits --budget --legacy-uprobes --py-stacks --no-py-stacks --py-launch-every --cuda-lib --no-nccl --nccl-lib --gpu --gpu-windows --gpu-period --no-cupti --no-inject --cupti-bridge --compress-level --group --config -v --verbose -q --quiet"
		;;
	analyze)
		case $prev in
		--report)
			_inferscope_bpf_reply files
			return
			;;
		-o | --output)
			_inferscope_bpf_reply files
			return
			;;
		--format)
			mapfile -t COMPREPLY < <(compgen -W "md json html perfetto" -- "$cur")
			return
			;;
		--group)
			_inferscope_bpf_reply groups
			return
			;;
		--config)
			_inferscope_bpf_reply files
			return
			;;
		esac
		opts="-h --help --usage -V --version --report -o --output --format --group --config -q --quiet"
		args=recordings
		;;
	diff)
		case $prev in
		--report)
			_inferscope_bpf_reply files
			return
			;;
		-o | --output)
			_inferscope_bpf_reply files
			return
			;;
		--format)
			mapfile -t COMPREPLY < <(compgen -W "md json html perfetto" -- "$cur")
			return
			;;
		--group)
			_inferscope_bpf_reply groups
			return
			;;
		--config)
			_inferscope_bpf_reply files
			return
			;;
		esac
		opts="-h --help --usage -V --version --report -o --output --format --group --config -q --quiet"
		args=recordings
		;;
	export)
		case $prev in
		--sqlite)
			_inferscope_bpf_reply files
			return
			;;
		esac
		opts="-h --help --usage -V --version --sqlite -q --quiet"
		args=recordings
		;;
	check)
		case $prev in
		-p | --pid)
			_inferscope_bpf_reply pids
			return
			;;
		--support-bundle)
			_inferscope_bpf_reply files
			return
			;;
		--recording)
			_inferscope_bpf_reply files
			return
			;;
		esac
		opts="-h --help --usage -V --version -p --pid --json --support-bundle --recording"
		;;
	top)
		case $prev in
		--interval)
			return
			;;
		-o | --output)
			_inferscope_bpf_reply files
			return
			;;
		-p | --pid)
			_inferscope_bpf_reply pids
			return
			;;
		-d | --duration)
			return
			;;
		--ringbuf-size)
			return
			;;
		--budget)
			mapfile -t COMPREPLY < <(compgen -W "off" -- "$cur")
			return
			;;
		--py-launch-every)
			return
			;;
		--cuda-lib)
			_inferscope_bpf_reply files
			return
			;;
		--nccl-lib)
			_inferscope_bpf_reply files
			return
			;;
		--gpu-period)
			return
			;;
		--cupti-bridge)
			_inferscope_bpf_reply files
			return
			;;
		--compress-level)
			return
			;;
		--config)
			_inferscope_bpf_reply files
			return
			;;
		esac
		opts="-h --help --usage -V --version --interval --once -o --output -p --pid -d --duration --ringbuf-size --no-follow --no-faults --no-cuda --no-nvtx --gil --no-gil-waits --budget --legacy-uprobes --py-stacks --no-py-stacks --py-launch-every --cuda-lib --no-nccl --nccl-lib --gpu --gpu-windows --gpu-period --no-cupti --no-inject --cupti-bridge --compress-level --config"
		;;
	daemon)
		case $prev in
		--ringbuf-size)
			return
			;;
		--budget)
			mapfile -t COMPREPLY < <(compgen -W "off" -- "$cur")
			return
			;;
		--py-launch-every)
			return
			;;
		--cuda-lib)
			_inferscope_bpf_reply files
			return
			;;
		--nccl-lib)
			_inferscope_bpf_reply files
			return
			;;
		--gpu-period)
			return
			;;
		--cupti-bridge)
			_inferscope_bpf_reply files
			return
			;;
		--compress-level)
			return
			;;
		--state-dir)
			_inferscope_bpf_reply dirs
			return
			;;
		--textfile-dir)
			_inferscope_bpf_reply dirs
			return
			;;
		--interval)
			return
			;;
		--window)
			return
			;;
		--keep-severity)
			mapfile -t COMPREPLY < <(compgen -W "info warning critical none" -- "$cur")
			return
			;;
		--keep-last)
			return
			;;
		--max-size)
			return
			;;
		--max-age)
			return
			;;
		--match)
			return
			;;
		--flight-recorder)
			return
			;;
		--trigger-sync)
			return
			;;
		--trigger-gpu-idle)
			return
			;;
		--trigger-drops)
			return
			;;
		--config)
			_inferscope_bpf_reply files
			return
			;;
		esac
		opts="-h --help --usage -V --version --ringbuf-size --no-follow --no-faults --no-cuda --no-nvtx --gil --no-gil-waits --budget --legacy-uprobes --py-stacks --no-py-stacks --py-launch-every --cuda-lib --no-nccl --nccl-lib --gpu --gpu-windows --gpu-period --no-cupti --no-inject --cupti-bridge --compress-level --state-dir --textfile-dir --interval --window --once --keep-severity --keep-last --max-size --max-age --match --no-cuda-processes --flight-recorder --trigger-sync --trigger-gpu-idle --trigger-drops --config"
		;;
	config)
		case $prev in
		--ringbuf-size)
			return
			;;
		--budget)
			mapfile -t COMPREPLY < <(compgen -W "off" -- "$cur")
			return
			;;
		--py-launch-every)
			return
			;;
		--cuda-lib)
			_inferscope_bpf_reply files
			return
			;;
		--nccl-lib)
			_inferscope_bpf_reply files
			return
			;;
		--gpu-period)
			return
			;;
		--cupti-bridge)
			_inferscope_bpf_reply files
			return
			;;
		--compress-level)
			return
			;;
		--format)
			mapfile -t COMPREPLY < <(compgen -W "md json html perfetto" -- "$cur")
			return
			;;
		--state-dir)
			_inferscope_bpf_reply dirs
			return
			;;
		--textfile-dir)
			_inferscope_bpf_reply dirs
			return
			;;
		--interval)
			return
			;;
		--window)
			return
			;;
		--keep-severity)
			mapfile -t COMPREPLY < <(compgen -W "info warning critical none" -- "$cur")
			return
			;;
		--keep-last)
			return
			;;
		--max-size)
			return
			;;
		--max-age)
			return
			;;
		--match)
			return
			;;
		--flight-recorder)
			return
			;;
		--trigger-sync)
			return
			;;
		--trigger-gpu-idle)
			return
			;;
		--trigger-drops)
			return
			;;
		--config)
			_inferscope_bpf_reply files
			return
			;;
		esac
		opts="-h --help --usage -V --version --json --ringbuf-size --no-follow --no-faults --no-cuda --no-nvtx --gil --no-gil-waits --budget --legacy-uprobes --py-stacks --no-py-stacks --py-launch-every --cuda-lib --no-nccl --nccl-lib --gpu --gpu-windows --gpu-period --no-cupti --no-inject --cupti-bridge --compress-level --format --state-dir --textfile-dir --interval --window --once --keep-severity --keep-last --max-size --max-age --match --no-cuda-processes --flight-recorder --trigger-sync --trigger-gpu-idle --trigger-drops --config"
		args="words show"
		;;
	bench)
		case $prev in
		-r | --rounds)
			return
			;;
		-s | --seconds)
			return
			;;
		-o | --output)
			_inferscope_bpf_reply files
			return
			;;
		-c | --check)
			_inferscope_bpf_reply files
			return
			;;
		-n | --only)
			return
			;;
		-t | --tmpdir)
			_inferscope_bpf_reply dirs
			return
			;;
		--baseline)
			_inferscope_bpf_reply files
			return
			;;
		--max-ratio)
			return
			;;
		--alpha)
			return
			;;
		--group)
			_inferscope_bpf_reply groups
			return
			;;
		esac
		opts="-h --help --usage -V --version -r --rounds -s --seconds -o --output -c --check -n --only -t --tmpdir --kci --quick --ktap --baseline --max-ratio --alpha --group"
		;;
	esac

	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
	elif [[ -z $cmd ]] && ((COMP_CWORD == 1)); then
		mapfile -t COMPREPLY < <(compgen -W "record analyze diff export check top daemon config bench" -- "$cur")
	elif [[ -n $args ]]; then
		_inferscope_bpf_reply $args
	fi
} &&
	complete -F _inferscope_bpf inferscope-bpf
