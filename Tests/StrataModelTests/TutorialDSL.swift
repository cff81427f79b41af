import Foundation
import StrataModels

/// The tutorial apps' versions written with the schema DSL, exactly as they shipped before the apps were
/// declared as macro models: the macro form must give the same JSON and version hashes.
enum TutorialDSL {
    /// Builds a schema; a DSL model that does not validate fails the test that uses it.
    static func schema(_ make: () throws -> Schema) -> Schema? { try? make() }

    enum Posts {
        static let v1: Schema? = schema {
            try Schema("v1") {
                Entity("Post") {
                    Attribute("postID", .uuid).unique()
                    Attribute("color", .string)
                    Attribute("content", .string)
                    Attribute("date", .date).indexed()
                }
            }
        }

        static let v2: Schema? = schema {
            try Schema("v2") {
                Entity("Post") {
                    Attribute("postID", .uuid).unique()
                    Attribute("hexColor", .string).renamed(from: "color")
                    Attribute("content", .string)
                    Attribute("date", .date).indexed()
                }
            }
        }

        static let v3: Schema? = schema {
            try Schema("v3") {
                Entity("Post") {
                    Attribute("postID", .uuid).unique()
                    Attribute("hexColor", .string)
                    Attribute("date", .date).indexed()
                    Relationship("sections", to: "Section", inverse: "post", toMany: true, deleteRule: .cascade)
                }
                Entity("Section") {
                    Attribute("title", .string)
                    Attribute("body", .string)
                    Attribute("index", .int64)
                    Relationship("post", to: "Post", inverse: "sections")
                }
            }
        }

        static let v4: Schema? = schema {
            try Schema("v4") {
                Entity("Post") {
                    Attribute("postID", .uuid).unique()
                    Attribute("hexColor", .string)
                    Attribute("date", .date).indexed()
                    Attribute("softDelete", .bool).defaultValue(false)
                    Relationship("sections", to: "Section", inverse: "post", toMany: true, deleteRule: .cascade)
                }
                Entity("Section") {
                    Attribute("title", .string)
                    Attribute("body", .string)
                    Attribute("index", .int64)
                    Relationship("post", to: "Post", inverse: "sections")
                }
            }
        }
    }

    enum Books {
        static let v1: Schema? = schema {
            try Schema("v1") {
                Entity("User") {
                    Attribute("name", .string).unique()
                    Relationship("books", to: "Book", inverse: "readers", toMany: true)
                }
                Entity("Book") {
                    Attribute("title", .string)
                    Attribute("authorName", .string)
                    Attribute("fileURL", .url)
                    Relationship("readers", to: "User", inverse: "books", toMany: true)
                }
            }
        }

        static let v2: Schema? = schema {
            try Schema("v2") {
                Entity("User") {
                    Attribute("name", .string).unique()
                    Relationship("books", to: "Book", inverse: "readers", toMany: true)
                }
                Entity("Book") {
                    Attribute("title", .string)
                    Attribute("fileURL", .url)
                    Relationship("readers", to: "User", inverse: "books", toMany: true)
                    Relationship("authors", to: "Author", inverse: "books", toMany: true)
                }
                Entity("Author") {
                    Attribute("name", .string).unique()
                    Relationship("books", to: "Book", inverse: "authors", toMany: true)
                }
            }
        }

        static let v3: Schema? = schema {
            try Schema("v3") {
                Entity("User") {
                    Attribute("name", .string).unique()
                    Attribute("displayName", .string)
                    Relationship("books", to: "Book", inverse: "readers", toMany: true)
                    Relationship("files", to: "File", inverse: "user", toMany: true, deleteRule: .cascade)
                }
                Entity("Book") {
                    Attribute("title", .string)
                    Relationship("readers", to: "User", inverse: "books", toMany: true)
                    Relationship("authors", to: "Author", inverse: "books", toMany: true)
                    Relationship("files", to: "File", inverse: "book", toMany: true, deleteRule: .cascade)
                }
                Entity("Author") {
                    Attribute("name", .string).unique()
                    Relationship("books", to: "Book", inverse: "authors", toMany: true)
                }
                Entity("File") {
                    Attribute("url", .url)
                    Attribute("ownerDisplayName", .string)
                    Relationship("book", to: "Book", inverse: "files")
                    Relationship("user", to: "User", inverse: "files")
                }
            }
        }
    }

    enum Notes {
        static let v1: Schema? = schema {
            try Schema("v1") {
                Entity("Note") {
                    Attribute("title", .string)
                    Attribute("body", .string)
                    Attribute("category", .string)
                }
            }
        }

        static let v2: Schema? = schema {
            try Schema("v2") {
                Entity("Note") {
                    Attribute("title", .string)
                    Attribute("body", .string)
                    Attribute("category", .string)
                    Attribute("pinned", .bool).defaultValue(false)
                }
            }
        }

        static let v3: Schema? = schema {
            try Schema("v3") {
                Entity("Note") {
                    Attribute("title", .string)
                    Attribute("body", .string)
                    Attribute("pinned", .bool).defaultValue(false)
                    Relationship("category", to: "Category", inverse: "notes")
                }
                Entity("Category") {
                    Attribute("name", .string).unique()
                    Relationship("notes", to: "Note", inverse: "category", toMany: true)
                }
            }
        }

        static let v4: Schema? = schema {
            try Schema("v4") {
                Entity("Note") {
                    Attribute("title", .string)
                    Attribute("body", .string)
                    Attribute("pinned", .bool).defaultValue(false)
                    Relationship("categories", to: "Category", inverse: "notes", toMany: true).renamed(from: "category")
                }
                Entity("Category") {
                    Attribute("name", .string).unique()
                    Relationship("notes", to: "Note", inverse: "categories", toMany: true)
                }
            }
        }
    }
}
