/// Where the web app may send a browser back to after signing in or switching language.
public enum RedirectPolicy {
    /// `raw` if it is a path on this site, else nil. Browsers forgive a lot in a `Location`: they
    /// drop tabs and newlines, read `\` as `/`, and take `//host` or `https:host` as another site,
    /// so only a plain path is accepted: one leading `/`, then no `/` or `\` second, and no control
    /// character, white space or backslash anywhere.
    public static func safeLocalPath(_ raw: String?) -> String? {
        guard let raw, raw.utf8.count < 500, raw.hasPrefix("/") else { return nil }
        let scalars = Array(raw.unicodeScalars)
        if scalars.count > 1, scalars[1] == "/" || scalars[1] == "\\" { return nil }
        for scalar in scalars {
            if scalar == "\\" || scalar.properties.generalCategory == .control || scalar.properties.isWhitespace { return nil }
            // Format characters (zero-width, bidi controls) are invisible and never in our paths.
            if scalar.properties.generalCategory == .format { return nil }
        }
        return raw
    }
}
