import Foundation

/// The delivery import's and the board's bulk actions' strings, in English and French.
extension Text {
    static let imports = Text("Import deliveries", "Importer des livraisons")
    static let importsIntro = Text("Upload a spreadsheet (CSV or Excel) with one delivery per row. Every row is checked first; nothing is created until you confirm.",
                                   "Envoyez un tableau (CSV ou Excel) avec une livraison par ligne. Chaque ligne est d’abord vérifiée ; rien n’est créé avant votre confirmation.")
    static let importTemplates = Text("Templates:", "Modèles :")
    static let importTemplateCSV = Text("CSV (English)", "CSV (anglais)")
    static let importTemplateCSVFr = Text("CSV (French)", "CSV (français)")
    static let importTemplateXLSX = Text("Excel (English)", "Excel (anglais)")
    static let importTemplateXLSXFr = Text("Excel (French)", "Excel (français)")
    static let importFile = Text("File (.csv or .xlsx, up to 10,000 rows)", "Fichier (.csv ou .xlsx, jusqu’à 10 000 lignes)")
    static let importCheck = Text("Check the file", "Vérifier le fichier")
    static let importRecent = Text("Recent imports", "Importations récentes")
    static let importNone = Text("No import yet.", "Aucune importation pour l’instant.")
    static let importRows = Text("%@ rows", "%@ lignes")
    static let importValid = Text("Ready to create", "Prêtes à créer")
    static let importInvalid = Text("With problems (left out)", "Avec des problèmes (écartées)")
    static let importAlready = Text("Already imported (skipped)", "Déjà importées (ignorées)")
    static let importTotal = Text("Total price", "Prix total")
    static let importCommit = Text("Create %@ deliveries", "Créer %@ livraisons")
    static let importCommitted = Text("%@ deliveries created.", "%@ livraisons créées.")
    static let importRejected = Text("This file cannot be imported as it is. Correct it and upload it again.",
                                     "Ce fichier ne peut pas être importé tel quel. Corrigez-le et envoyez-le à nouveau.")
    static let importExpired = Text("This upload has expired; upload the file again.", "Cet envoi a expiré ; envoyez à nouveau le fichier.")
    static let importFixHint = Text("Rows with problems are left out. Correct them in your file and upload it again: rows already created are skipped by their external reference.",
                                    "Les lignes avec des problèmes sont écartées. Corrigez-les dans votre fichier et renvoyez-le : les lignes déjà créées sont ignorées grâce à leur référence externe.")
    static let importProblems = Text("Problems", "Problèmes")
    static let importRow = Text("Row", "Ligne")
    static let importColumn = Text("Column", "Colonne")
    static let importProblem = Text("Problem", "Problème")
    static let importMoreProblems = Text("…and %@ more.", "…et %@ de plus.")
    static let importWholeFile = Text("file", "fichier")
    static let importStatusReady = Text("Checked, waiting", "Vérifié, en attente")
    static let importStatusCommitted = Text("Created", "Créé")
    static let importStatusRejected = Text("Rejected", "Refusé")
    static let importStatusExpired = Text("Expired", "Expiré")
    static let importSeeOrders = Text("See the deliveries", "Voir les livraisons")
    // The board's bulk actions.
    static let bulkSelect = Text("Select %@", "Sélectionner %@")
    static let bulkWithSelected = Text("With the selected orders", "Avec les commandes sélectionnées")
    static let bulkAssign = Text("Assign", "Attribuer")
    static let bulkCancel = Text("Cancel them", "Les annuler")
    static let bulkCancelReason = Text("Reason for cancelling", "Motif de l’annulation")
    static let bulkLabels = Text("Print labels", "Imprimer les étiquettes")
    static let bulkDone = Text("%@ done, %@ not possible.", "%@ effectuées, %@ impossibles.")
    static let bulkNoneSelected = Text("Select at least one order.", "Sélectionnez au moins une commande.")
    static let labelsTitle = Text("Labels", "Étiquettes")
    static let labelPrint = Text("Print", "Imprimer")
    static let labelFrom = Text("From", "De")
    static let labelTo = Text("To", "À")
    static let labelTrack = Text("Follow it:", "Suivi :")
    static let labelPDF = Text("Print the label (PDF)", "Imprimer l’étiquette (PDF)")
    static let labelPDFA4 = Text("Four to an A4 sheet", "Quatre par feuille A4")
    static let labelsPDF = Text("Labels (PDF, four to an A4 sheet)", "Étiquettes (PDF, quatre par feuille A4)")
    static let labelScanned = Text("Label scanned: it is this parcel. The scan is kept as the hand-over’s proof.",
                                   "Étiquette scannée : c’est bien ce colis. Le scan est gardé comme preuve de la remise.")
    static let handoverTitle = Text("A Waybill parcel", "Un colis Waybill")
    static let handoverSignIn = Text("This code is a parcel’s label. Sign in as the person who carries or receives it to record the hand-over.",
                                     "Ce code est l’étiquette d’un colis. Connectez-vous en tant que personne qui le transporte ou le reçoit pour enregistrer la remise.")
    static let handoverUnknown = Text("This label is not one of your parcels.", "Cette étiquette n’est pas celle d’un de vos colis.")
    // Exports.
    static let exportCSV = Text("Export (CSV)", "Exporter (CSV)")
    static let exportThisMonth = Text("This month as a spreadsheet:", "Ce mois en tableau :")
    static let exportStatementLines = Text("statement lines (CSV)", "lignes des relevés (CSV)")
    static let exportLedger = Text("ledger (CSV)", "journal des mouvements (CSV)")
}

/// What an import problem's code means, for people (the API gives the English text beside the code).
enum ImportText {
    static func message(_ code: String) -> Text {
        switch code {
        case "required": Text("Required.", "Obligatoire.")
        case "too_long": Text("Too long.", "Trop long.")
        case "invalid": Text("Not a value this column accepts.", "Valeur non acceptée dans cette colonne.")
        case "invalid_email": Text("Not an email address.", "Pas une adresse e-mail.")
        case "invalid_postal_code": Text("Not a postal code.", "Pas un numéro postal.")
        case "out_of_range": Text("Out of range.", "Hors limites.")
        case "required_for_recipient_code": Text("A recipient code needs the recipient’s email.", "Le code destinataire demande l’e-mail du destinataire.")
        case "no_account_address": Text("No pickup given and the account has no address.", "Aucun enlèvement indiqué et le compte n’a pas d’adresse.")
        case "unknown_customer": Text("No account has this email.", "Aucun compte n’a cet e-mail.")
        case "not_your_account": Text("You can import only for your own account.", "Vous ne pouvez importer que pour votre propre compte.")
        case "customer_cannot_send": Text("This account cannot place orders now.", "Ce compte ne peut pas passer de commande pour l’instant.")
        case "duplicate_in_file": Text("This external reference appears twice in the file.", "Cette référence externe apparaît deux fois dans le fichier.")
        case "online_payment_not_in_import": Text("Imported deliveries are billed or paid in cash, not by card or TWINT.", "Les livraisons importées sont facturées ou payées en espèces, pas par carte ni TWINT.")
        case "invoice_requires_company": Text("Only company accounts pay by invoice.", "Seuls les comptes d’entreprise paient sur facture.")
        case "company_not_vetted": Text("This company pays by invoice once our staff have checked it.", "Cette entreprise paie sur facture une fois vérifiée par notre équipe.")
        case "twint_requires_chf": Text("TWINT needs Swiss francs.", "TWINT demande des francs suisses.")
        case "too_many_cells": Text("The row has more cells than the header.", "La ligne a plus de cellules que l’en-tête.")
        case "unknown_column": Text("Unknown column (ignored).", "Colonne inconnue (ignorée).")
        case "missing_column": Text("This column is missing.", "Cette colonne manque.")
        case "duplicate_column": Text("This column appears twice.", "Cette colonne apparaît deux fois.")
        case "empty_file": Text("The file is empty.", "Le fichier est vide.")
        case "no_rows": Text("The file has a header but no delivery.", "Le fichier a un en-tête mais aucune livraison.")
        case "too_many_rows": Text("More than 10,000 rows: split the file.", "Plus de 10 000 lignes : divisez le fichier.")
        case "too_many_columns": Text("A value lies beyond the 64th column (BL), or a row is wider than any spreadsheet (16,384 columns): the file is not a table of deliveries.",
                                      "Une valeur se trouve au-delà de la 64e colonne (BL), ou une ligne est plus large qu’aucun tableur (16 384 colonnes) : le fichier n’est pas un tableau de livraisons.")
        case "too_many_values": Text("More than 400,000 filled cells: split the file.", "Plus de 400 000 cellules remplies : divisez le fichier.")
        case "unterminated_quote": Text("A quoted cell never closes (from this line).", "Une cellule entre guillemets ne se ferme jamais (depuis cette ligne).")
        case "unreadable_file": Text("Not a CSV or Excel (.xlsx) file Waybill can read.", "Pas un fichier CSV ou Excel (.xlsx) lisible par Waybill.")
        case "file_too_large": Text("The workbook is too large once unpacked.", "Le classeur est trop volumineux une fois décompressé.")
        default: Text("Not accepted (\(code)).", "Non accepté (\(code)).")
        }
    }

    static let codes = ["required", "too_long", "invalid", "invalid_email", "invalid_postal_code", "out_of_range", "required_for_recipient_code",
                        "no_account_address", "unknown_customer", "not_your_account", "customer_cannot_send", "duplicate_in_file",
                        "online_payment_not_in_import", "invoice_requires_company", "company_not_vetted", "twint_requires_chf", "too_many_cells",
                        "unknown_column", "missing_column", "duplicate_column", "empty_file", "no_rows", "too_many_rows", "too_many_columns",
                        "too_many_values", "unterminated_quote", "unreadable_file", "file_too_large"]
}

enum ImportCatalogue {
    static let all: [Text] = [
        .imports, .importsIntro, .importTemplates, .importTemplateCSV, .importTemplateCSVFr, .importTemplateXLSX, .importTemplateXLSXFr,
        .importFile, .importCheck, .importRecent, .importNone, .importRows, .importValid, .importInvalid, .importAlready, .importTotal,
        .importCommit, .importCommitted, .importRejected, .importExpired, .importFixHint, .importProblems, .importRow, .importColumn,
        .importProblem, .importMoreProblems, .importWholeFile, .importStatusReady, .importStatusCommitted, .importStatusRejected,
        .importStatusExpired, .importSeeOrders, .bulkSelect, .bulkWithSelected, .bulkAssign, .bulkCancel, .bulkCancelReason, .bulkLabels,
        .bulkDone, .bulkNoneSelected, .labelsTitle, .labelPrint, .labelFrom, .labelTo, .labelTrack,
        .labelPDF, .labelPDFA4, .labelsPDF, .labelScanned, .handoverTitle, .handoverSignIn, .handoverUnknown, .labelScanNote,
        .exportCSV, .exportThisMonth, .exportStatementLines, .exportLedger,
    ] + ImportText.codes.map(ImportText.message)
}
