# SPDX-License-Identifier: Apache-2.0
# zsh -f zsh-complete.zsh FOLDER QUERIES: completes each line of the file QUERIES as a person
# would, by pressing Tab at its end in an interactive zsh whose completion system (compinit) finds
# _imprint in FOLDER; prints '### N' for the Nth line, then each match offered, one a line.
# compadd is wrapped to print what each call adds; everything else is zsh's own.
zmodload zsh/zpty || exit 1
zpty shell zsh -f -i
zpty -w shell "PROMPT='%% ' LISTMAX=100000"
zpty -w shell "fpath=(${(q)1} \$fpath); autoload -U compinit; compinit -u -D"
zpty -w shell 'compadd () {
  if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return $?; fi
  typeset -a hits
  builtin compadd -A hits "$@"
  local ret=$?
  (( $#hits )) && print -r -- "<M>${(j:<S>:)hits}</M>"
  return $ret
}'
zpty -w shell 'bindkey "^I" complete-word'
local output line
# Everything the shell echoed so far (the definitions above) is read and dropped.
zpty -w shell "print RE''ADY"
output=''
while zpty -r -t shell line || sleep 0.05; do
  output+=$line
  [[ $output == *READY* ]] && break
done
integer number=0
local query
for query in "${(@f)$(<$2)}"; do
  # The line, Tab; then the line is cleared and a marker printed, to know the answer ended.
  zpty -n -w shell "$query"$'\t'
  zpty -n -w shell $'\C-a\C-k'
  zpty -w shell "print EN''D$number"
  output=''
  integer tries=0
  while zpty -r -t shell line || sleep 0.05; do
    output+=$line
    [[ $output == *END$number* ]] && break
    (( ++tries < 400 )) || { print -u2 "no answer to: $query"; exit 1; }
  done
  print -r -- "### $number"
  print -r -- "${output%%END$number*}" | grep -ao '<M>.*</M>' \
    | sed -e 's/<\/M>[^<]*<M>/<S>/g; s/<M>//; s/<\/M>.*//; s/<S>/\n/g'
  number+=1
done
zpty -d shell
