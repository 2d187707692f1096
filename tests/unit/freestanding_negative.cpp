// Deliberately hosted code: the freestanding check must reject its archive
// (operator new, and unwind tables for the exception it may throw).
#include <vector>

int kilnHostedSum(int n) {
  std::vector<int> v(static_cast<unsigned>(n), 1);
  int sum = 0;
  for (int x : v)
    sum += x;
  return sum;
}
