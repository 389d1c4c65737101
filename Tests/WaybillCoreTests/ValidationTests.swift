import Testing
import WaybillCore

@Suite("Account rules")
struct ValidationTests {
    static let good = Registration(firstName: " Ada ", lastName: "Muster", address: "Bahnhofstrasse 1", postalCode: "8001",
                                   city: "Zürich", email: " Ada@Example.COM", password: "correct-horse-battery", isCompany: false)

    @Test("A complete form is accepted and cleaned up")
    func cleanForm() throws {
        let clean = try Self.good.validated().get()
        #expect(clean.firstName == "Ada")
        #expect(clean.email == "ada@example.com")
        #expect(clean.companyName == nil)
    }

    @Test("Every missing field is reported at once")
    func everyMissingField() {
        let empty = Registration(firstName: "", lastName: " ", address: "", postalCode: "", city: "", email: "", password: "", isCompany: true)
        guard case .failure(let error) = empty.validated() else { Issue.record("accepted an empty form"); return }
        #expect(Set(error.errors.fields.keys) == ["firstName", "lastName", "address", "postalCode", "city", "email", "password", "companyName"])
        #expect(error.errors.fields.values.allSatisfy { $0 == "required" })
    }

    @Test("A private customer's company name is dropped")
    func privateCustomerHasNoCompany() throws {
        var form = Self.good
        form.companyName = "Ignored AG"
        #expect(try form.validated().get().companyName == nil)
    }

    @Test("Email addresses", arguments: [
        ("ada@example.com", true), ("a.b+c@sub.example.ch", true), ("zoë@exämple.ch", true),
        ("ada", false), ("ada@", false), ("@example.com", false), ("ada@example", false), ("a b@example.com", false),
        ("ada@@example.com", false), ("ada@-example.com", false), ("ada@example..com", false),
    ])
    func emails(email: String, valid: Bool) {
        #expect(Validation.isValidEmail(email) == valid)
    }

    @Test("Passwords: 8 to 72 bytes, not common, not the email")
    func passwords() {
        #expect(PasswordPolicy.problem(with: "correct-horse-battery") == nil)
        #expect(PasswordPolicy.problem(with: "") == "required")
        #expect(PasswordPolicy.problem(with: "short") == "too_short")
        #expect(PasswordPolicy.problem(with: String(repeating: "a", count: 72) + "b") == "too_long")
        #expect(PasswordPolicy.problem(with: String(repeating: "ab", count: 36)) == nil, "72 bytes is allowed")
        #expect(PasswordPolicy.problem(with: String(repeating: "é", count: 37)) == "too_long", "bytes count, not characters")
        #expect(PasswordPolicy.problem(with: "Password123") == "too_common")
        #expect(PasswordPolicy.problem(with: "zzzzzzzzzz") == "too_common")
        #expect(PasswordPolicy.problem(with: "ada@example.com", email: "ada@example.com") == "same_as_email")
    }

    @Test("Postal codes are letters, digits, spaces and dashes")
    func postalCodes() {
        for ok in ["8001", "SW1A 1AA", "75-001"] {
            var errors = FieldErrors()
            Validation.postalCode(ok, into: &errors)
            #expect(errors.isEmpty, "\(ok)")
        }
        var errors = FieldErrors()
        Validation.postalCode("80<01", into: &errors)
        #expect(errors["postalCode"] == "invalid")
    }

    @Test("Profile changes: only what is sent, company name only for companies")
    func profileChanges() throws {
        let clean = try ProfileChanges(city: " Bern ").validated(isCompany: false).get()
        #expect(clean.city == "Bern")
        #expect(clean.firstName == nil)
        guard case .failure(let error) = ProfileChanges(companyName: "X").validated(isCompany: false) else {
            Issue.record("a private customer set a company name"); return
        }
        #expect(error.errors["companyName"] == "not_a_company")
    }
}

@Suite("Sign-in throttle")
struct ThrottlePolicyTests {
    let policy = LoginThrottlePolicy.perAccount

    @Test("The first attempts are heard at once; then each one doubles the wait, up to the cap")
    func delays() {
        #expect((0..<policy.freeFailures).map(policy.delay(afterFailures:)).allSatisfy { $0 == 0 })
        #expect(policy.delay(afterFailures: policy.freeFailures) == 1)
        #expect(policy.delay(afterFailures: policy.freeFailures + 1) == 2)
        #expect(policy.delay(afterFailures: policy.freeFailures + 2) == 4)
        #expect(policy.delay(afterFailures: 99) == policy.maxDelay)
    }

    @Test("A hundred failures an hour at most, then nothing until the window ends")
    func hourlyCap() {
        #expect(policy.nextAttemptAllowed(failures: 100, windowStart: 1000, lastFailure: 1000, now: 2000) == Int64(4600))
        #expect(policy.nextAttemptAllowed(failures: 100, windowStart: 1000, lastFailure: 1000, now: 4600) == nil)
        #expect(policy.nextAttemptAllowed(failures: 3, windowStart: 1000, lastFailure: 1500, now: 1500) == nil)
        #expect(policy.nextAttemptAllowed(failures: 7, windowStart: 1000, lastFailure: 1500, now: 1501) == Int64(1505))
        // A stored time at the end of Int64 saturates instead of trapping.
        #expect(policy.nextAttemptAllowed(failures: 7, windowStart: 1000, lastFailure: .max, now: 1501) == Int64(4600))
    }

    @Test("Within the cap, an attacker can make at most about a hundred guesses an hour")
    func guessesPerHour() {
        // Simulate an attacker who tries as soon as allowed.
        var now: Int64 = 0, failures = 0, last: Int64 = 0
        while now < 3600 {
            if let next = policy.nextAttemptAllowed(failures: failures, windowStart: 0, lastFailure: last, now: now) {
                now = next
                continue
            }
            failures += 1
            last = now
        }
        #expect(failures <= policy.maxFailuresPerWindow)
        #expect(failures > 50, "legitimate typos are not punished hard")
    }
}
