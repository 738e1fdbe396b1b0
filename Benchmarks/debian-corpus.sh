#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# usage: Benchmarks/debian-corpus.sh DEST [COUNT]
#
# Gathers COUNT (default 500) real PDFs, made by others with many producers (pdfTeX, LuaTeX,
# XeTeX, Ghostscript, Apache FOP, LibreOffice, cairo, ...), from Debian 12 (bookworm)
# documentation packages, for Benchmarks/corpus-thumbs-bench.sh (issue #30). Nothing of it is
# committed: the packages are fetched with the ordinary Debian client (`apt-get download` into
# DEST/.debs) and opened with `dpkg-deb --fsys-tarfile | tar -x`; the licences are the
# packages' own (usr/share/doc/<package>/copyright in each .deb).
#
# Every file ending .pdf or .pdf.gz (gunzipped) of the packages below is taken, in the order
# package then path (C collation), exact duplicates (same sha256) skipped, until COUNT; the
# packages are fetched in that order and only as far as needed, so a second run with the .debs
# present downloads nothing. Each file is DEST/NNNN-<package>-<basename>.pdf, and
# DEST/MANIFEST.tsv lists name, package, version, path in the .deb, sha256, bytes, pages and
# producer (pdfinfo's; "?" where pdfinfo cannot open the file) and pdfinfo's verdict: ok,
# warnings (opened, with complaints on stderr) or "fails: <its first error>". Files pdfinfo cannot
# open are kept and marked, not skipped: real uploads are messy.
#
# Needs: apt-get (after `apt-get update`), dpkg-deb, tar, gzip, sha256sum, pdfinfo
# (poppler-utils, in scripts/packages.txt's test set).
#
# The packages, Debian 12's versions of 2026-12-05 (a package missing from the mirror is reported
# and passed over), with the PDFs each adds (symbolic links and duplicates not counted) and what
# made most of them; 1179 in all, with 155 distinct producer strings (39 families). The default
# 500 end inside texlive-latex-base-doc (152 of its 269; 58 producers, 20 families: pdfTeX 301,
# xdvipdfmx 71, Ghostscript 52, Apache FOP 38, LuaTeX 9, XeTeX 6, Acrobat Distiller 6, ...),
# about 273 MB of downloads; the packages after the last one needed are not fetched.
#   asymptote-doc                    6  pdfTeX, Asymptote's figures
#   auto-multiple-choice-doc-pdf     7  xdvipdfmx (English, French, Japanese), pdfTeX
#   camlidl-doc, docbook-xsl-doc-pdf   1 + 1  old pdfTeX
#   erlang-doc                      38  Erlang/OTP's manuals, Apache FOP
#   expeyes-doc-en, eyes17-manuals-en  3 + 1  photos and screenshots, xdvipdfmx
#   freefem-doc                      1
#   gap-* (29 GAP packages), gap-doc   37 + 3  GAPDoc manuals, pdfTeX
#   ghostscript-doc                  1
#   gle-graphics-manual, gnuplot-doc, gri-pdf-doc  1 each  graphics manuals
#   gutenprint-doc                   1  LibreOffice
#   lilypond-doc-pdf                40  music notation, Ghostscript; full-page 1-bit scans
#   live-manual-pdf                 36  the Debian Live manual in its translations
#   maxima-doc, octave-doc, r-doc-pdf, siscone-doc-pdf  1, 5, 9, 1  reference manuals
#   texlive-fonts-recommended-doc   11  font samples
#   texlive-humanities-doc         142  LaTeX packages' documentation (linguistics, editions)
#   texlive-latex-base-doc         269  the LaTeX kernel's and packages' documentation
#   texlive-latex-recommended-doc  155  LaTeX packages' documentation
#   texlive-metapost-doc            79  MetaPost and its figures
#   texlive-science-doc            328  LaTeX packages' documentation (MiKTeX, Ghostscript too)
set -euo pipefail

DEST=${1:?usage: Benchmarks/debian-corpus.sh DEST [COUNT]}
COUNT=${2:-500}
[[ $COUNT =~ ^[1-9][0-9]*$ ]] || { echo "COUNT must be a positive whole number" >&2; exit 2; }
for tool in apt-get dpkg-deb tar gzip sha256sum pdfinfo; do
  command -v "$tool" >/dev/null || { echo "needs $tool (scripts/bootstrap)" >&2; exit 1; }
done
mkdir -p "$DEST/.debs"
DEST=$(cd "$DEST" && pwd)

# Kept in C order: the corpus is the first COUNT files of this order.
PACKAGES=(
  asymptote-doc
  auto-multiple-choice-doc-pdf
  camlidl-doc
  docbook-xsl-doc-pdf
  erlang-doc
  expeyes-doc-en
  eyes17-manuals-en
  freefem-doc
  gap-aclib gap-alnuth gap-atlasrep gap-autodoc gap-autpgrp gap-congruence gap-cryst
  gap-crystcat gap-design gap-doc gap-factint gap-fga gap-float gap-gapdoc gap-grape gap-guava
  gap-hap gap-hapcryst gap-io gap-laguna gap-nq gap-openmath gap-polycyclic gap-polymaking
  gap-radiroot gap-scscp gap-smallgrp gap-sonata gap-toric gap-utils
  ghostscript-doc
  gle-graphics-manual
  gnuplot-doc
  gri-pdf-doc
  gutenprint-doc
  lilypond-doc-pdf
  live-manual-pdf
  maxima-doc
  octave-doc
  r-doc-pdf
  siscone-doc-pdf
  texlive-fonts-recommended-doc
  texlive-humanities-doc
  texlive-latex-base-doc
  texlive-latex-recommended-doc
  texlive-metapost-doc
  texlive-science-doc
)

# fetch_deb PACKAGE: the path of its .deb in DEST/.debs, downloaded when not there yet.
fetch_deb() {
  local pkg=$1 found
  found=$(compgen -G "$DEST/.debs/${pkg}_*.deb" | head -n1 || true)
  if [[ -z $found ]]; then
    if ! (cd "$DEST/.debs" && apt-get download "$pkg" >/dev/null 2>"$DEST/.debs/error.log"); then
      echo "warning: apt-get download $pkg failed, passed over:" >&2
      grep -v '^W: Download is performed unsandboxed' "$DEST/.debs/error.log" | tail -2 >&2
      return 1
    fi
    rm -f "$DEST/.debs/error.log"
    found=$(compgen -G "$DEST/.debs/${pkg}_*.deb" | head -n1)
  fi
  echo "$found"
}

debs_before=$(compgen -G "$DEST/.debs/*.deb" | wc -l || true)
work="$DEST/.extract"
rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
rm -f "$DEST"/[0-9][0-9][0-9][0-9]-*.pdf
manifest="$work/MANIFEST.tsv"
printf 'name\tpackage\tversion\tpath\tsha256\tbytes\tpages\tproducer\tpdfinfo\n' >"$manifest"
declare -A seen=()
n=0
for pkg in "${PACKAGES[@]}"; do
  ((n < COUNT)) || break
  deb=$(fetch_deb "$pkg") || continue
  version=$(dpkg-deb -f "$deb" Version)
  dir="$work/$pkg"
  mkdir -p "$dir"
  dpkg-deb --fsys-tarfile "$deb" | tar -t | grep -E '\.pdf(\.gz)?$' | LC_ALL=C sort >"$dir.list" ||
    true
  if [[ ! -s $dir.list ]]; then
    echo "note: $pkg $version holds no PDF" >&2
    continue
  fi
  if ! dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir" --verbatim-files-from -T "$dir.list" \
    2>"$work/tar.err"; then
    echo "warning: tar complained about $pkg: $(head -n1 "$work/tar.err")" >&2
  fi
  while IFS= read -r path; do
    ((n < COUNT)) || break
    file="$dir/$path"
    # A symbolic link names another file of the package (or one outside it): not a PDF of its own.
    [[ -f $file && ! -L $file ]] || continue
    if [[ $path == *.gz ]]; then
      gzip -dc "$file" >"$work/unzipped.pdf" 2>/dev/null ||
        { echo "warning: $pkg: $path does not gunzip, passed over" >&2; continue; }
      file="$work/unzipped.pdf"
    fi
    sha=$(sha256sum <"$file" | cut -c1-64)
    [[ -z ${seen[$sha]:-} ]] || continue
    seen[$sha]=1
    n=$((n + 1))
    base=${path##*/}
    base=${base%.gz}
    base=${base%.pdf}
    name=$(printf '%04d-%s-%s.pdf' "$n" "$pkg" "${base//[^A-Za-z0-9._+-]/_}")
    mv "$file" "$DEST/$name"
    pages='?' producer='?'
    if pdfinfo -enc UTF-8 "$DEST/$name" >"$work/pdfinfo.out" 2>"$work/pdfinfo.err"; then
      pages=$(sed -n 's/^Pages: *//p' "$work/pdfinfo.out")
      # A producer may hold any byte, a NUL or a tab too: one line of text for the manifest.
      producer=$(sed -n 's/^Producer: *//p' "$work/pdfinfo.out" | tr -d '\000' | tr '\t\r\n' '   ' |
        sed 's/ *$//')
      verdict=ok
      [[ ! -s $work/pdfinfo.err ]] || verdict=warnings
    else
      verdict="fails: $(grep -v '^$' "$work/pdfinfo.err" | tail -n1 | tr '\t' ' ')"
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$pkg" "$version" "$path" "$sha" \
      "$(stat -c %s "$DEST/$name")" "${pages:-?}" "${producer:--}" "$verdict" >>"$manifest"
  done <"$dir.list"
  rm -rf "$dir" "$dir.list"
done
mv "$manifest" "$DEST/MANIFEST.tsv"
downloaded=$(($(compgen -G "$DEST/.debs/*.deb" | wc -l || true) - debs_before))

((n == COUNT)) || echo "warning: only $n PDFs in the packages listed, $COUNT asked" >&2
# The summary: files, packages, producers (exact strings, and families: the name before the
# first digit, "pdfTeX-1.40.24" and "pdfTeX-1.40.21" both pdfTeX), pages, pdfinfo's verdicts.
awk -F'\t' -v downloaded="$downloaded" -v dest="$DEST" '
  NR == 1 { next }
  {
    files++; bytes += $6; packages[$2]++; producers[$8]++
    family = $8; sub(/[ (v_-]*[0-9].*$/, "", family); sub(/,? Version$|,$/, "", family)
    families[family]++
    if ($7 ~ /^[0-9]+$/) pages += $7
    verdict = $9; sub(/:.*/, "", verdict); verdicts[verdict]++
  }
  END {
    for (p in packages) npackages++
    for (p in producers) nproducers++
    for (f in families) nfamilies++
    printf "%d PDFs in %s (%.1f MB, %d pages) from %d packages (%d downloaded now)\n",
      files, dest, bytes / 1e6, pages, npackages, downloaded
    printf "%d distinct producers, %d families; pdfinfo:", nproducers, nfamilies
    for (v in verdicts) printf " %s %d", v, verdicts[v]
    printf "\nfiles by producer family:\n"
    for (f in families) printf "%5d  %s\n", families[f], f | "sort -rn"
  }' "$DEST/MANIFEST.tsv"
