// Package redact finds a client's credential in text the client hands back, in every form
// a server plausibly echoes it in, and replaces it with [Redacted] (see [Redactor] for the
// forms). It is the SDK's machinery, kept apart from the client so that it reads alone;
// the SDK applies it to its own types (errors, headers, responses) in redact.go at the root,
// whose tests pin the redaction end to end, through a client, and fuzz it.
//
// # Design: layers decoded once, every form searched by one automaton
//
// The text a redactor reads is the server's, so its cost must be bounded by the text's
// length whatever the server writes. The redactor does a fixed number of linear passes and
// never backtracks:
//
//  1. Layers. An escape-aware decoder reads the text once, left to right, and writes the
//     next layer: every JSON escape (\u0037, \/), HTML reference (&#55; &#x37; &sol;) and
//     percent-escape (%37) replaced by its character, everything else copied. It keeps only
//     the escapes' places (an offset map), so that a place in a layer maps back to the
//     text. It repeats on its own output while escapes remain, up to [maxLayers] layers:
//     nested encodings come undone one layer per pass, whatever encodes what, and an
//     escape whose syntax characters are themselves escaped (\u0026#55;) is read at the
//     next layer. Each layer is at most as long as the one before, so the decoding costs
//     at most maxLayers readings of the text.
//  2. One automaton. Every secret (the tokens, the key, their base64 forms and cores, and
//     every piece of keyPieceLen characters of the key) is a pattern of one Aho–Corasick
//     automaton, a table with a row per state and a column per byte class, so that each
//     byte of each layer costs one table look-up whatever the number of secrets. A match
//     in any layer is mapped back through the offset maps to the bytes of the text that
//     spell it, escapes whole. Header names are read by a second automaton of the same
//     patterns in lower case, fed the text in lower case.
//  3. Runs. The last layer, the text fully decoded, is read once more for runs of base64
//     characters and of hex byte pairs, whose pieces of the key are looked up as packed
//     integers in small hash sets behind a bit filter (form 3 and 4 of [Redactor]).
//
// Every match, from every layer and every rule, is an interval of the text; overlapping
// intervals are merged and each becomes one [Redacted]. The context is looked at between
// chunks of every pass (every [chunk] bytes), so a caller's deadline holds.
//
// Text can be read more than one way, and a redactor that tried every reading branched at
// each escape. Here one reading is chosen, and every layer is searched, so that a secret
// spelt whole at any layer is caught. Where escapes nest the usual way, an escape's
// characters written plain, each layer undoes one. Where only some characters of an escape
// are escaped one layer down (&#9&#X35;&#59; for &#95;, a backslash then \u0075 for 'u'),
// the escape is read through them, preferred over a shorter escape its plain beginning
// happens to complete (&#9, a tab; \\, a backslash): see readEscape. What that gives up:
// an honest text with such a sequence ("&#9" with no ';' before an escaped digit) reads as
// the longer escape, which holds no secret unless the text did.
//
// # False positives
//
// What is removed that is not the secret: a run of base64 characters holding gramLen
// characters of one of the key's six base64 cores (a chance of some 10⁻⁷ for a random
// run of five characters, with the few hundred pieces of a 50-character key), a run of
// hex pairs holding 4 bytes of the key in a row (2⁻³² per window), a piece of
// keyPieceLen characters of the key (a word of the text would have to be 8 characters of
// the key). Ordinary text, English and JSON, holds none of these: the tests redact a
// megabyte of validation answers and leave it byte for byte as it was.
package redact
