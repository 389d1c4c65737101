/// A customer's sign-up form, as the specification lists it.
public struct Registration: Sendable, Equatable {
    public var firstName: String
    public var lastName: String
    public var address: String
    public var postalCode: String
    public var city: String
    public var email: String
    public var password: String
    public var isCompany: Bool
    public var companyName: String?

    public init(
        firstName: String, lastName: String, address: String, postalCode: String, city: String,
        email: String, password: String, isCompany: Bool, companyName: String? = nil
    ) {
        self.firstName = firstName
        self.lastName = lastName
        self.address = address
        self.postalCode = postalCode
        self.city = city
        self.email = email
        self.password = password
        self.isCompany = isCompany
        self.companyName = companyName
    }

    /// Checks every field at once and returns the cleaned-up form (trimmed text, normalised email),
    /// or every problem found, keyed by field.
    public func validated() -> Result<Registration, FieldErrorsError> {
        var errors = FieldErrors()
        var clean = self
        clean.firstName = Validation.text(firstName, field: "firstName", maxLength: Validation.maxNameLength, into: &errors)
        clean.lastName = Validation.text(lastName, field: "lastName", maxLength: Validation.maxNameLength, into: &errors)
        clean.address = Validation.text(address, field: "address", maxLength: Validation.maxAddressLength, into: &errors)
        clean.postalCode = Validation.postalCode(postalCode, into: &errors)
        clean.city = Validation.text(city, field: "city", maxLength: Validation.maxCityLength, into: &errors)
        clean.email = Validation.email(email, into: &errors)
        PasswordPolicy.validate(password, field: "password", email: clean.email, into: &errors)
        if isCompany {
            clean.companyName = Validation.text(companyName, field: "companyName", maxLength: Validation.maxNameLength, into: &errors)
        } else {
            clean.companyName = nil
        }
        return errors.isEmpty ? .success(clean) : .failure(FieldErrorsError(errors))
    }
}

/// Field errors as a Swift error, so validation can be `try`'d.
public struct FieldErrorsError: Error, Sendable, Equatable {
    public var errors: FieldErrors
    public init(_ errors: FieldErrors) { self.errors = errors }
}

/// Changes a person may make to their own profile. `nil` leaves a field as it is.
public struct ProfileChanges: Sendable, Equatable {
    public var firstName: String?
    public var lastName: String?
    public var address: String?
    public var postalCode: String?
    public var city: String?
    public var companyName: String?

    public init(firstName: String? = nil, lastName: String? = nil, address: String? = nil,
                postalCode: String? = nil, city: String? = nil, companyName: String? = nil) {
        self.firstName = firstName
        self.lastName = lastName
        self.address = address
        self.postalCode = postalCode
        self.city = city
        self.companyName = companyName
    }

    /// Validates the fields that are present. A company keeps a company name; a private customer
    /// cannot set one.
    public func validated(isCompany: Bool) -> Result<ProfileChanges, FieldErrorsError> {
        var errors = FieldErrors()
        var clean = ProfileChanges()
        if let firstName { clean.firstName = Validation.text(firstName, field: "firstName", maxLength: Validation.maxNameLength, into: &errors) }
        if let lastName { clean.lastName = Validation.text(lastName, field: "lastName", maxLength: Validation.maxNameLength, into: &errors) }
        if let address { clean.address = Validation.text(address, field: "address", maxLength: Validation.maxAddressLength, into: &errors) }
        if let postalCode { clean.postalCode = Validation.postalCode(postalCode, into: &errors) }
        if let city { clean.city = Validation.text(city, field: "city", maxLength: Validation.maxCityLength, into: &errors) }
        if let companyName {
            if isCompany {
                clean.companyName = Validation.text(companyName, field: "companyName", maxLength: Validation.maxNameLength, into: &errors)
            } else {
                errors.add("companyName", "not_a_company")
            }
        }
        return errors.isEmpty ? .success(clean) : .failure(FieldErrorsError(errors))
    }
}
