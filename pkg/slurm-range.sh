#!/usr/bin/env bash
# slurm-range.sh SLURM_VERSION - print "X.Y X.Y+1" for Slurm X.Y.Z: the
# range of Slurm releases a plugin built with X.Y.Z's headers loads into
# (Slurm refuses a plugin of another major.minor), as the packages'
# dependencies write it (>= X.Y, << X.Y+1; 22.05.8 gives "22.05 22.06").
# Anything but X.Y.Z is a one-line error.
set -u
v=${1-}
[[ $v =~ ^([0-9]+)\.([0-9]+)\.[0-9]+$ ]] ||
	{ echo "hvd: package: 'SLURM_VERSION=$v': not a Slurm version X.Y.Z (no Slurm headers found?)" >&2; exit 1; }
printf '%d.%02d %d.%02d\n' "${BASH_REMATCH[1]}" $((10#${BASH_REMATCH[2]})) \
	"${BASH_REMATCH[1]}" $((10#${BASH_REMATCH[2]} + 1))
