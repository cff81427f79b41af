/// Declared mappings written with the model types of the stage's versions (`@Entity` types in `SchemaVersion`
/// namespaces): key paths instead of names, resolved to the names the versions' schemas use.
extension EntityMapping {
    /// ``extract(_:from:linkedBy:values:skippingNil:)`` with model types: `Source` of the stage's source version,
    /// `New` of its destination version.
    ///
    /// ```swift
    /// .extract(PostsV3.Section.self, from: PostsV2.Post.self, linkedBy: \PostsV3.Section.post, values: [
    ///     \PostsV3.Section.body: .attribute(\PostsV2.Post.content),
    ///     \PostsV3.Section.title: .prefix(of: \PostsV2.Post.content, length: 4, appending: "..."),
    /// ])
    /// ```
    public static func extract<New: EntityModel, Source: EntityModel, R>(
        _ entity: New.Type, from source: Source.Type, linkedBy relationship: KeyPath<New, R>,
        values: [PartialKeyPath<New>: MappedValue], skippingNil: PartialKeyPath<Source>? = nil
    ) -> EntityMapping {
        extract(New.entityName, from: Source.entityName, linkedBy: name(relationship, of: New.self),
                values: names(values), skippingNil: skippingNil.map { name($0, of: Source.self) })
    }

    /// ``deduplicate(_:of:into:as:linkedBy:values:)`` with model types: `attribute` of the source version's type,
    /// `key` of the new entity's type and `relationship` of the source's type in the destination version
    /// (`\BooksV2.Book.author`).
    public static func deduplicate<Source: EntityModel, V, New: EntityModel, K, Kept: EntityModel, R>(
        _ attribute: KeyPath<Source, V>, into key: KeyPath<New, K>, linkedBy relationship: KeyPath<Kept, R>,
        values: [PartialKeyPath<New>: MappedValue] = [:]
    ) -> EntityMapping {
        declared(Source.entityName, .deduplicate(
            attribute: name(attribute, of: Source.self), entity: New.entityName, key: name(key, of: New.self),
            relationship: qualified(name(relationship, of: Kept.self), Kept.entityName),
            values: names(values)))
    }

    /// ``move(_:into:values:)`` with model types.
    public static func move<Source: EntityModel, New: EntityModel>(
        _ source: Source.Type, into entity: New.Type, values: [PartialKeyPath<New>: MappedValue] = [:]
    ) -> EntityMapping {
        move(Source.entityName, into: New.entityName, values: names(values))
    }

    /// The property a key path names; one the model type does not declare keeps a description of the key path,
    /// which validation reports as an unknown attribute or relationship.
    private static func name<T: EntityModel>(_ keyPath: AnyKeyPath, of type: T.Type) -> String {
        T.propertyName(for: keyPath) ?? "\(keyPath)"
    }

    private static func names<T: EntityModel>(_ values: [PartialKeyPath<T>: MappedValue]) -> [String: MappedValue] {
        var out: [String: MappedValue] = [:]
        for (keyPath, value) in values { out[name(keyPath, of: T.self)] = value }
        return out
    }

    /// A relationship named with the entity that declares it (`Book.author`), so that validation can check a
    /// key path of the wrong type.
    private static func qualified(_ relationship: String, _ entity: String) -> String { entity + "." + relationship }
}

extension MappedValue {
    /// The value of the source model type's attribute `keyPath`.
    public static func attribute<S: EntityModel, V>(_ keyPath: KeyPath<S, V>) -> MappedValue {
        .attribute(S.propertyName(for: keyPath) ?? "\(keyPath)")
    }

    /// The first `length` characters of the source model type's text `keyPath`, followed by `suffix`.
    public static func prefix<S: EntityModel>(of keyPath: KeyPath<S, String>, length: Int, appending suffix: String = "") -> MappedValue {
        .prefix(of: S.propertyName(for: keyPath) ?? "\(keyPath)", length: length, appending: suffix)
    }

    /// The first `length` characters of the source model type's optional text `keyPath`, followed by `suffix`.
    public static func prefix<S: EntityModel>(of keyPath: KeyPath<S, String?>, length: Int, appending suffix: String = "") -> MappedValue {
        .prefix(of: S.propertyName(for: keyPath) ?? "\(keyPath)", length: length, appending: suffix)
    }
}
