/// Keeps the `capacity` smallest elements seen (by `areInIncreasingOrder`).
struct BoundedHeap<Element> {
    private var elements: [Element] = []
    let capacity: Int
    let areInIncreasingOrder: (Element, Element) throws -> Bool

    init(capacity: Int, _ areInIncreasingOrder: @escaping (Element, Element) throws -> Bool) {
        self.capacity = capacity
        self.areInIncreasingOrder = areInIncreasingOrder
    }

    /// Max-heap on the order: the root is the largest kept element.
    mutating func insert(_ e: Element) throws {
        guard capacity > 0 else { return }
        if elements.count < capacity {
            elements.append(e)
            var i = elements.count - 1
            while i > 0 {
                let p = (i - 1) / 2
                guard try areInIncreasingOrder(elements[p], elements[i]) else { break }
                elements.swapAt(p, i)
                i = p
            }
        } else if try areInIncreasingOrder(e, elements[0]) {
            elements[0] = e
            var i = 0
            while true {
                let l = 2 * i + 1, r = l + 1
                var largest = i
                if l < elements.count, try areInIncreasingOrder(elements[largest], elements[l]) { largest = l }
                if r < elements.count, try areInIncreasingOrder(elements[largest], elements[r]) { largest = r }
                if largest == i { break }
                elements.swapAt(i, largest)
                i = largest
            }
        }
    }

    func sortedElements() throws -> [Element] { try elements.sorted(by: areInIncreasingOrder) }
}
