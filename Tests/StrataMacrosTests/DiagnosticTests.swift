import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// Every diagnostic of `@Entity`, on the property it concerns, with its fix-its; with any, nothing is generated.
@Suite struct DiagnosticTests {
    @Test("not a struct")
    func notAStruct() {
        expectExpansion("@Entity class Post {\n    var title: String\n}", expandedSource: "class Post {\n    var title: String\n}",
            diagnostics: [
                DiagnosticSpec(message: "@Entity applies to a struct: models are values (classes, enums and actors are not supported)", line: 1, column: 1),
            ])
    }

    @Test("a generic struct")
    func genericStruct() {
        expectExpansion("@Entity struct Box<T> {\n    var title: String\n}", expandedSource: "struct Box<T> {\n    var title: String\n}",
            diagnostics: [
                DiagnosticSpec(message: "@Entity does not support generic structs: an entity has one fixed layout", line: 1, column: 16),
            ])
    }

    @Test("a type Strata does not store: Codable or raw value")
    func unsupportedType() {
        // (A plain type name expands like any stored type: the compiler then checks that it is a ModelScalar, and
        // otherwise says to mark it @Field(.codable) or @Field(.rawValue). Other forms are told here.)
        expectExpansion("@Entity struct Post {\n    var span: ClosedRange<Int>\n}", expandedSource: "struct Post {\n    var span: ClosedRange<Int>\n}",
            diagnostics: [
                DiagnosticSpec(message: "Strata cannot store a property of type 'ClosedRange<Int>': store it as Codable JSON with @Field(.codable), or as its raw value with @Field(.rawValue)", line: 2, column: 15, fixIts: [FixItSpec(message: "store 'span' as Codable JSON"), FixItSpec(message: "store 'span' as its raw value")]),
            ],
            applyFixIts: ["store 'span' as Codable JSON"], fixedSource: "@Entity struct Post {\n    @Field(.codable) var span: ClosedRange<Int>\n}")
    }

    @Test("an integer type Strata does not store")
    func unsupportedInteger() {
        expectExpansion("@Entity struct Post {\n    var views: UInt8\n}", expandedSource: "struct Post {\n    var views: UInt8\n}",
            diagnostics: [
                DiagnosticSpec(message: "Strata stores Int, Int64, Int32 and Int16, not 'UInt8'", line: 2, column: 16, fixIts: [FixItSpec(message: "use 'Int16'")]),
            ],
            applyFixIts: ["use 'Int16'"], fixedSource: "@Entity struct Post {\n    var views: Int16\n}")
    }

    @Test("a collection without .codable")
    func collection() {
        expectExpansion("@Entity struct Post {\n    var tags: [String]\n}", expandedSource: "struct Post {\n    var tags: [String]\n}",
            diagnostics: [
                DiagnosticSpec(message: "a collection ('[String]') is stored as Codable JSON: mark it @Field(.codable), or make it a relationship", line: 2, column: 15, fixIts: [FixItSpec(message: "store 'tags' as Codable JSON")]),
            ],
            applyFixIts: ["store 'tags' as Codable JSON"], fixedSource: "@Entity struct Post {\n    @Field(.codable) var tags: [String]\n}")
    }

    @Test("a default that is not a literal")
    func nonLiteralDefault() {
        expectExpansion("@Entity struct Post {\n    var date: Date = Date()\n}", expandedSource: "struct Post {\n    var date: Date = Date()\n}",
            diagnostics: [
                DiagnosticSpec(message: "the initial value of 'date' is the attribute's default and is recorded in the schema, so it must be a literal (a number, a string, true, false or nil); set other values in an initializer", line: 2, column: 22, fixIts: [FixItSpec(message: "remove the initial value")]),
            ],
            applyFixIts: ["remove the initial value"], fixedSource: "@Entity struct Post {\n    var date: Date\n}")
    }

    @Test("no type annotation and no literal")
    func missingType() {
        expectExpansion("@Entity struct Post {\n    var title = makeTitle()\n}", expandedSource: "struct Post {\n    var title = makeTitle()\n}",
            diagnostics: [
                DiagnosticSpec(message: "'title' needs a type annotation (its type is the attribute's type)", line: 2, column: 9),
            ])
    }

    @Test("object identifiers without @Related")
    func objectIDsWithoutRelated() {
        expectExpansion("@Entity struct Post {\n    var sections: [ObjectID]\n}", expandedSource: "struct Post {\n    var sections: [ObjectID]\n}",
            diagnostics: [
                DiagnosticSpec(message: "'sections' links objects: mark it @Related(inverse: \\Destination.property)", line: 2, column: 5),
            ])
    }

    @Test("@Related on an attribute")
    func relatedOnAttribute() {
        expectExpansion("@Entity struct Post {\n    @Related(inverse: \\Section.post) var title: String\n}", expandedSource: "struct Post {\n    var title: String\n}",
            diagnostics: [
                DiagnosticSpec(message: "@Related applies to 'ObjectID?' (to-one) and '[ObjectID]' (to-many) properties, not 'String'", line: 2, column: 49),
            ])
    }

    @Test("a to-one relationship that is not optional")
    func toOneNotOptional() {
        expectExpansion("@Entity struct Section {\n    @Related(inverse: \\Post.sections) var post: ObjectID\n}", expandedSource: "struct Section {\n    var post: ObjectID\n}",
            diagnostics: [
                DiagnosticSpec(message: "a to-one relationship may link no object: declare 'post' as 'ObjectID?'", line: 2, column: 49, fixIts: [FixItSpec(message: "make 'post' optional")]),
            ],
            applyFixIts: ["make 'post' optional"], fixedSource: "@Entity struct Section {\n    @Related(inverse: \\Post.sections) var post: ObjectID?\n}")
    }

    @Test("a transient property without a default")
    func transientWithoutDefault() {
        expectExpansion("@Entity struct Post {\n    @Field(.transient) var cache: Int\n}", expandedSource: "struct Post {\n    var cache: Int\n}",
            diagnostics: [
                DiagnosticSpec(message: "the transient property 'cache' is never stored: give it an initial value to read as", line: 2, column: 5),
            ])
    }

    @Test("a constant with an initial value")
    func letWithInitialValue() {
        expectExpansion("@Entity struct Post {\n    let kind: String = \"post\"\n}", expandedSource: "struct Post {\n    let kind: String = \"post\"\n}",
            diagnostics: [
                DiagnosticSpec(message: "'kind' is a constant with an initial value, so it cannot be read back from the store: make it 'var'", line: 2, column: 5, fixIts: [FixItSpec(message: "make 'kind' a 'var'")]),
            ],
            applyFixIts: ["make 'kind' a 'var'"], fixedSource: "@Entity struct Post {\n    var kind: String = \"post\"\n}")
    }

    @Test("a lazy property")
    func lazyProperty() {
        expectExpansion("@Entity struct Post {\n    lazy var summary: String = \"\"\n}", expandedSource: "struct Post {\n    lazy var summary: String = \"\"\n}",
            diagnostics: [
                DiagnosticSpec(message: "lazy properties cannot be stored: make 'summary' a computed property, or a plain 'var'", line: 2, column: 5),
            ])
    }

    @Test("@Field on a computed property")
    func fieldOnComputedProperty() {
        expectExpansion("@Entity struct Post {\n    @Field(.indexed) var length: Int { 3 }\n}", expandedSource: "struct Post {\n    var length: Int { 3 }\n}",
            diagnostics: [
                DiagnosticSpec(message: "'length' is computed, so it is not stored: remove @Field/@Related, or make it a stored property", line: 2, column: 5),
            ])
    }

    @Test("conflicting options")
    func conflictingOptions() {
        expectExpansion("@Entity struct Post {\n    @Field(.codable, .rawValue) var kind: Kind\n}", expandedSource: "struct Post {\n    var kind: Kind\n}",
            diagnostics: [
                DiagnosticSpec(message: "'kind' is stored as Codable JSON or as its raw value, not both: keep one of .codable and .rawValue", line: 2, column: 5),
            ])
    }

    @Test("two markers on one property")
    func duplicateMarkers() {
        expectExpansion("@Entity struct Post {\n    @Field(.indexed) @Field(.unique) var code: String\n}", expandedSource: "struct Post {\n    var code: String\n}",
            diagnostics: [
                DiagnosticSpec(message: "'code' has more than one @Field or @Related attribute", line: 2, column: 5),
            ])
    }

    @Test("objectID of another type")
    func objectIDOfAnotherType() {
        expectExpansion("@Entity struct Post {\n    var objectID: Int\n}", expandedSource: "struct Post {\n    var objectID: Int\n}",
            diagnostics: [
                DiagnosticSpec(message: "'objectID' holds the object's identifier: declare it as 'var objectID: ObjectID?'", line: 2, column: 5),
            ])
    }

    @Test("two properties in one declaration")
    func multipleBindings() {
        expectExpansion("@Entity struct Post {\n    var a, b: Int\n}", expandedSource: "struct Post {\n    var a, b: Int\n}",
            diagnostics: [
                DiagnosticSpec(message: "declare one stored property per 'var' in an @Entity struct ('a, b')", line: 2, column: 5),
            ])
    }

    @Test("@Related without an inverse")
    func relatedWithoutInverse() {
        expectExpansion("@Entity struct Post {\n    @Related(deleteRule: .cascade) var sections: [ObjectID] = []\n}", expandedSource: "struct Post {\n    var sections: [ObjectID] = []\n}",
            diagnostics: [
                DiagnosticSpec(message: "@Related names its inverse with a key path, as in @Related(inverse: \\Section.post), or with the destination type and the inverse's name, as in @Related(to: Post.self, inverse: \"sections\")", line: 2, column: 5),
            ])
    }

    @Test("a floating-point type Strata does not store")
    func unsupportedFloatingPoint() {
        expectExpansion("@Entity struct Post {\n    var score: CGFloat\n}", expandedSource: "struct Post {\n    var score: CGFloat\n}",
            diagnostics: [
                DiagnosticSpec(message: "Strata stores Double and Float, not 'CGFloat'", line: 2, column: 16, fixIts: [FixItSpec(message: "use 'Double'")]),
            ],
            applyFixIts: ["use 'Double'"], fixedSource: "@Entity struct Post {\n    var score: Double\n}")
    }
}
